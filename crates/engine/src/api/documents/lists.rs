//! Documents that list what the engine found or did: `ganger.agents/1` (the agents ganger
//! knows), `ganger.fleet-submitted/1`, `ganger.workers/1`, and a round's stream as
//! `ganger.log-line/1` lines (`log --json`) or `ganger.log-tail/1` (its last lines).

use crate::api::Engine;
use crate::api::diff_stream::DiffPage;
use crate::base::error::Result;
use crate::env::agents::AgentFound;
use crate::ops::fleet::{Submitted, WorkerStatus};
use crate::ops::log::{LogLine, LogOptions};
use ganger_events::Event;
use serde::Serialize;
use std::collections::VecDeque;

document! {
    /// `ganger.agents/1`.
    AgentList("ganger.agents/1") {
        agents: Vec<AgentFound>,
    }
}

/// `ganger.fleet-submitted/1`.
#[derive(Debug, Clone, Serialize)]
pub struct FleetSubmitted {
    pub schema: &'static str,
    pub fleet: String,
    pub submitted: Submitted,
}

impl FleetSubmitted {
    pub fn new(fleet: &str, submitted: Submitted) -> FleetSubmitted {
        FleetSubmitted {
            schema: "ganger.fleet-submitted/1",
            fleet: fleet.to_owned(),
            submitted,
        }
    }

    /// The submission in one line, as the CLI and the MCP server say it.
    pub fn line(&self) -> String {
        let s = &self.submitted;
        format!(
            "fleet {}: {} queued to start, {} to continue, {} pending, {} finished\n",
            self.fleet,
            s.started.len(),
            s.resumed.len(),
            s.pending.len(),
            s.finished.len()
        )
    }
}

document! {
    /// `ganger.workers/1`.
    Workers("ganger.workers/1") {
        workers: Vec<WorkerStatus>,
    }
}

/// `ganger.log-line/1`: one line of a round's stream read through its adapter.
#[derive(Debug, Clone, Serialize)]
pub struct LogLineDocument<'a> {
    pub schema: &'static str,
    pub line: u64,
    pub kind: Option<&'a str>,
    pub events: &'a [Event],
    /// The length of a line too long to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub too_long: Option<u64>,
}

impl<'a> LogLineDocument<'a> {
    /// The document of a line read (`None` for the raw stream's bytes).
    pub fn of(line: &'a LogLine<'a>) -> Option<LogLineDocument<'a>> {
        let (number, kind, events, too_long) = match line {
            LogLine::Raw(_) => return None,
            LogLine::Parsed { number, parsed, .. } => {
                (*number, parsed.kind.as_deref(), &parsed.events[..], None)
            }
            LogLine::TooLong { number, bytes } => (*number, None, &[][..], Some(*bytes)),
        };
        Some(LogLineDocument {
            schema: "ganger.log-line/1",
            line: number,
            kind,
            events,
            too_long,
        })
    }
}

/// A line of `ganger.log-tail/1`: as `ganger.log-line/1` has it, without its schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TailLine {
    Parsed {
        line: u64,
        kind: Option<String>,
        events: Vec<Event>,
    },
    TooLong {
        line: u64,
        too_long: u64,
    },
}

/// `ganger.log-tail/1`: the last lines of a round's stream.
#[derive(Debug, Clone, Serialize)]
pub struct LogTail {
    pub schema: &'static str,
    pub task: String,
    /// The round asked for (`None`: the last).
    pub round: Option<u32>,
    pub lines: Vec<TailLine>,
}

impl Engine {
    /// The last `keep` lines of round `round` of `slug` (its last with `None`).
    pub fn log_tail(&self, slug: &str, round: Option<u32>, keep: usize) -> Result<LogTail> {
        let mut lines: VecDeque<TailLine> = VecDeque::new();
        let options = LogOptions {
            slug: slug.to_owned(),
            round,
            raw: false,
            follow: false,
            gateway: false,
        };
        self.log(&options, &mut |line| {
            let line = match line {
                LogLine::Parsed { number, parsed, .. } => TailLine::Parsed {
                    line: number,
                    kind: parsed.kind,
                    events: parsed.events,
                },
                LogLine::TooLong { number, bytes } => TailLine::TooLong {
                    line: number,
                    too_long: bytes,
                },
                LogLine::Raw(_) => return Ok(()),
            };
            if lines.len() == keep {
                lines.pop_front();
            }
            lines.push_back(line);
            Ok(())
        })?;
        Ok(LogTail {
            schema: "ganger.log-tail/1",
            task: slug.to_owned(),
            round,
            lines: lines.into(),
        })
    }
}

/// `ganger.diff-page/1`: a page of a task's patch (or of one round's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffPageDocument {
    pub schema: &'static str,
    pub task: String,
    /// The round whose patch it is (`None`: the whole task's).
    pub round: Option<u32>,
    pub stat: bool,
    /// Where the page starts, in bytes of the patch.
    pub offset: u64,
    pub total_bytes: u64,
    /// Where the next page starts (`None` on the last).
    pub next_offset: Option<u64>,
    pub text: String,
}

impl DiffPageDocument {
    /// Page `page` of the patch of `task` (round `round`'s alone with `Some`).
    pub fn new(task: &str, round: Option<u32>, stat: bool, page: DiffPage) -> DiffPageDocument {
        DiffPageDocument {
            schema: "ganger.diff-page/1",
            task: task.to_owned(),
            round,
            stat,
            offset: page.start,
            total_bytes: page.total,
            next_offset: page.next,
            text: page.text,
        }
    }
}
