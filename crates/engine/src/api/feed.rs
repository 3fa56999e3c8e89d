//! What a front end that shows the fleet reads, beyond the CLI's commands: the task table
//! with every column a board shows (labels, fleet, tokens, the last `DONE:` line), a task's
//! rounds as reports, a round's prompt (its diff is `api_round_diff.rs`), the whole journal after
//! an entry, and a round's events read through the agent's adapter from a byte offset of its
//! stream, so that a client that saw up to offset N gets the rest and nothing twice. Only
//! reads: nothing here changes the store.

use crate::api::Engine;
use crate::api::round_report::{store_of, task_round, task_round_in};
use crate::base::error::{EngineError, Result};
use crate::evidence::report::RoundReport;
use crate::task::lookup::find_task;
use ganger_agents::scan::{Line, LineCutter};
use ganger_events::{Event, RoundStatus};
use ganger_store::{JournalEntry, RoundStream, StreamKind, Task};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;

/// One task as a board shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BoardTask {
    pub slug: String,
    pub agent: String,
    pub model: Option<String>,
    pub owner: String,
    pub rounds: u32,
    /// The last round's status (`running`, `done`, ...), `None` before the first round.
    pub status: Option<RoundStatus>,
    pub cost_usd: f64,
    /// Tokens spent over all rounds (input and output).
    pub tokens: u64,
    pub labels: BTreeMap<String, String>,
    pub fleet: Option<String>,
    /// The last `DONE:` line a round of the task gave.
    pub done: Option<String>,
    pub created_at: i64,
    /// The pipeline's task, for a role's task.
    pub parent: Option<String>,
    pub role: Option<String>,
}

/// One line of a round's stream, read through its agent's adapter.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StreamLine {
    /// The line's number in the stream, from 1.
    pub number: u64,
    /// The byte offset just past the line: where a reader that saw it goes on.
    pub offset: u64,
    /// The agent's own type of the line, `None` for a line that is not an event.
    pub kind: Option<String>,
    /// What the line means in ganger's terms.
    pub events: Vec<Event>,
}

/// How a read of a round's stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamRead {
    /// Where the next read goes on from: just past the last whole line.
    pub offset: u64,
    /// Whether more may come: the round still ran when the read began, or the read stopped
    /// at its size.
    pub running: bool,
    /// Whether the read stopped at its size with more of the stream there already.
    pub more: bool,
}

impl Engine {
    /// The task named `slug`, or `None` when there is none (a name that is not a task's
    /// name is bad input).
    pub fn find_task(&self, slug: &str) -> Result<Option<Task>> {
        crate::base::slug::check_task_name(slug)?;
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(None);
        };
        Ok(store.task(slug)?)
    }

    /// Every task with the columns a board shows.
    pub fn board_tasks(&self) -> Result<Vec<BoardTask>> {
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(Vec::new());
        };
        let mut done = ganger_store::EvidenceStore::done_lines(&*store)?;
        let mut names = BTreeMap::new();
        let mut tasks = Vec::new();
        for summary in store.task_summaries()? {
            let Some(task) = store.task(&summary.slug)? else {
                continue;
            };
            names.insert(task.id, task.slug.clone());
            tasks.push(task);
        }
        let mut rows = Vec::with_capacity(tasks.len());
        for task in tasks {
            let spent = ganger_store::EvidenceStore::task_spent(&*store, task.id, None)?;
            rows.push(BoardTask {
                labels: ganger_store::EvidenceStore::labels(&*store, task.id)?,
                fleet: ganger_store::EvidenceStore::task_fleet(&*store, task.id)?,
                done: done.remove(&task.slug),
                tokens: spent.tokens,
                parent: task.parent.and_then(|id| names.get(&id).cloned()),
                slug: task.slug,
                agent: task.agent,
                model: task.model,
                owner: task.owner,
                rounds: task.rounds,
                status: task.last_status,
                cost_usd: task.cost_usd,
                created_at: task.created_at,
                role: task.role,
            });
        }
        Ok(rows)
    }

    /// Every round of a task, as `status` reports a round.
    pub fn round_reports(&self, slug: &str) -> Result<Vec<RoundReport>> {
        let store = store_of(self.workspace(), slug)?;
        let task = find_task(&*store, slug)?;
        // The task's budgets are read once, from the store already open (a report of its own
        // would open one per round).
        let budgets = crate::evidence::budget::budgets_of(&*store, &task);
        Ok(store
            .rounds(task.id)?
            .iter()
            .map(|round| {
                crate::evidence::report::round_report_with(
                    self.workspace(),
                    &task,
                    round,
                    budgets.clone(),
                )
            })
            .collect())
    }

    /// The prompt of round `number` of a task, exactly as sent.
    pub fn round_prompt(&self, slug: &str, number: u32) -> Result<String> {
        let (task, round) = task_round(self.workspace(), slug, Some(number))?;
        let path = self
            .workspace()
            .state
            .round_file(&task.slug, round.number, "prompt.md");
        std::fs::read_to_string(&path).map_err(|e| EngineError::io("read", &path, e))
    }

    /// The last journal entry's number (0 for none yet).
    pub fn last_journal_id(&self) -> Result<i64> {
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(0);
        };
        Ok(store.last_journal_id()?)
    }

    /// The journal of every commander after entry `after`, at most `limit` entries.
    pub fn journal_after(&self, after: i64, limit: u32) -> Result<Vec<JournalEntry>> {
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(Vec::new());
        };
        Ok(store.journal(after, limit)?)
    }

    /// A reader of round `number`'s events that hands over the lines ending past byte
    /// `offset` (the parser reads the earlier ones too, so that it knows what they said).
    pub fn round_feed(&self, slug: &str, number: u32, offset: u64) -> Result<RoundFeed> {
        let (task, round) = task_round(self.workspace(), slug, Some(number))?;
        let adapter = crate::task::admission::known_adapter(self.workspace(), &task.agent)?;
        Ok(RoundFeed {
            stream: RoundStream::of(&task, &round, StreamKind::Stdout),
            path: self
                .workspace()
                .state
                .round_file(&task.slug, round.number, "jsonl"),
            parser: Box::new(ganger_agents::acp::WarmOrCold::of(adapter)),
            cutter: LineCutter::default(),
            fed: 0,
            newlines: 0,
            consumed: 0,
            skip_until: offset,
            ended: false,
        })
    }
}

/// A line of a stream read through its adapter's parser.
fn parse(
    parser: &mut dyn ganger_agents::StreamParser,
    number: u64,
    offset: u64,
    line: Line<'_>,
) -> StreamLine {
    let parsed = match line {
        Line::Content(content) => parser.parse_line(content),
        Line::TooLong(_) => ganger_agents::ParsedLine {
            kind: None,
            events: Vec::new(),
        },
    };
    StreamLine {
        number,
        offset,
        kind: parsed.kind,
        events: parsed.events,
    }
}

/// A round's events as they come: each [`RoundFeed::poll`] hands over the lines written since
/// the last one. It holds no store connection between polls (a backend's connection may not
/// move between threads), only where it is in the stream and the parser's memory.
pub struct RoundFeed {
    stream: RoundStream,
    path: std::path::PathBuf,
    parser: Box<dyn ganger_agents::StreamParser>,
    cutter: LineCutter,
    /// Bytes of the stream given to the cutter.
    fed: u64,
    /// Newlines among them.
    newlines: u64,
    /// The offset just past the last whole line.
    consumed: u64,
    /// Lines ending at or before this offset were seen by the reader already.
    skip_until: u64,
    ended: bool,
}

impl std::fmt::Debug for RoundFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoundFeed")
            .field("stream", &self.stream)
            .field("fed", &self.fed)
            .field("consumed", &self.consumed)
            .finish_non_exhaustive()
    }
}

impl RoundFeed {
    /// The round's number.
    pub fn round(&self) -> u32 {
        self.stream.number
    }

    /// Hands the lines written since the last poll to `out`. `running` in the result is false
    /// once the round has ended and every line of its stream was handed over.
    pub fn poll(&mut self, engine: &Engine, out: &mut dyn FnMut(StreamLine)) -> Result<StreamRead> {
        if self.ended {
            return Ok(self.at_end());
        }
        let store = store_of(engine.workspace(), &self.stream.slug)?;
        self.poll_in(&*store, usize::MAX, out)
    }

    /// The same through a store the caller keeps open, reading at most `at_most` bytes of
    /// the stream (the rest at the next poll): a reader that polls often opens no store of its
    /// own, and one that catches up holds a page at a time.
    pub fn poll_in(
        &mut self,
        store: &dyn ganger_store::Backend,
        at_most: usize,
        out: &mut dyn FnMut(StreamLine),
    ) -> Result<StreamRead> {
        if self.ended {
            return Ok(self.at_end());
        }
        let (_, round) = task_round_in(store, &self.stream.slug, Some(self.stream.number))?;
        let running = round.status == RoundStatus::Running;
        let mut more = false;
        if let Some(mut reader) = store.read_stream(&self.stream, self.fed)? {
            let mut buffer = vec![0u8; 64 * 1024];
            let mut taken = 0usize;
            loop {
                if taken >= at_most {
                    more = true;
                    break;
                }
                let room = buffer.len().min(at_most - taken);
                let read = match reader.read(&mut buffer[..room]) {
                    Ok(read) => read,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(EngineError::io("read", &self.path, e)),
                };
                if read == 0 {
                    break;
                }
                taken += read;
                self.push(&buffer[..read], out);
            }
        }
        if !running && !more {
            let (at, skip_until) = (self.fed, self.skip_until);
            let parser = &mut self.parser;
            // A finished stream's last line needs no newline.
            self.cutter.finish(|n: u64, line: Line<'_>| {
                let line = parse(&mut **parser, n, at, line);
                if at > skip_until {
                    out(line);
                }
            });
            self.consumed = at;
            self.ended = true;
        }
        Ok(StreamRead {
            offset: self.consumed.max(self.skip_until),
            running: !self.ended,
            more,
        })
    }

    /// The read of a round whose stream was handed over whole.
    fn at_end(&self) -> StreamRead {
        StreamRead {
            offset: self.consumed.max(self.skip_until),
            running: false,
            more: false,
        }
    }

    fn push(&mut self, chunk: &[u8], out: &mut dyn FnMut(StreamLine)) {
        let at = self.fed;
        // Line n of the stream ends at its n-th newline (blank lines are counted but not
        // handed over), so the offset past each line comes from this chunk's newlines.
        let ends: Vec<u64> = memchr::memchr_iter(b'\n', chunk)
            .map(|i| at + i as u64 + 1)
            .collect();
        let (before, skip_until, len) = (self.newlines, self.skip_until, chunk.len() as u64);
        let parser = &mut self.parser;
        self.cutter.push(chunk, |n: u64, line: Line<'_>| {
            let end = n
                .checked_sub(before + 1)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| ends.get(i).copied())
                .unwrap_or(at + len);
            let line = parse(&mut **parser, n, end, line);
            if end > skip_until {
                out(line);
            }
        });
        self.newlines += ends.len() as u64;
        if let Some(last) = ends.last() {
            self.consumed = *last;
        }
        self.fed += len;
    }
}
