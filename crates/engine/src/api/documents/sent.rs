//! What a round sent to a task answers: `ganger.detached/1` when it runs in a detached host,
//! `ganger.queued/1` when it waits in the queue, the round's report when it ran here; and
//! `ganger.still-running/1`, a wait that ran out of time.

use crate::api::{Engine, Sent};
use crate::evidence::report::RoundReport;
use crate::ops::fleet::QueueItem;
use crate::round::launch::Launched;
use serde::Serialize;
use std::path::PathBuf;

/// `ganger.detached/1`: a round that runs in a detached host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detached {
    pub schema: &'static str,
    pub task: String,
    pub round: u32,
    /// `running`.
    pub status: &'static str,
    pub host_pid: u32,
    /// The round's stream of events, as it is written.
    pub events: PathBuf,
}

document! {
    /// `ganger.queued/1`: what was queued for the scheduler.
    #[derive(PartialEq)]
    Queued("ganger.queued/1") {
        items: Vec<QueueItem>,
        /// Whether the task holds new rounds: the item waits until its policy is accept.
        held: bool,
    }
}

/// `ganger.still-running/1`: a wait whose time ran out with the round still running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StillRunning {
    pub schema: &'static str,
    pub task: String,
    pub round: u32,
    /// `running`.
    pub status: &'static str,
    pub host_pid: Option<i32>,
    pub started_at: String,
}

impl StillRunning {
    /// Round `round` of `task`, as `wait` left it.
    pub fn new(task: &str, round: u32, host_pid: Option<i32>, started_at: &str) -> StillRunning {
        StillRunning {
            schema: "ganger.still-running/1",
            task: task.to_owned(),
            round,
            status: "running",
            host_pid,
            started_at: started_at.to_owned(),
        }
    }
}

/// The document of a round sent: one of the three, as it is.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum SentDocument {
    Detached(Detached),
    Queued(Queued),
    /// It ran here to its end.
    Finished(Box<RoundReport>),
}

impl Engine {
    /// `ganger.detached/1` of round `round` of `task`, run by the host `host_pid`.
    pub fn detached(&self, task: &str, round: u32, host_pid: u32) -> Detached {
        Detached {
            schema: "ganger.detached/1",
            task: task.to_owned(),
            round,
            status: "running",
            host_pid,
            events: self.workspace().state.round_file(task, round, "jsonl"),
        }
    }

    /// What a round sent answers with.
    pub fn sent_document(&self, sent: Sent) -> SentDocument {
        match sent {
            Sent::Queued { item, held } => SentDocument::Queued(Queued::new(vec![item], held)),
            Sent::Elsewhere { item } => SentDocument::Queued(Queued::new(vec![item], false)),
            Sent::Launched(Launched::Detached {
                task,
                round,
                host_pid,
            }) => SentDocument::Detached(self.detached(&task.slug, round.number, host_pid)),
            Sent::Launched(Launched::Finished(outcome)) => {
                SentDocument::Finished(Box::new(self.outcome_report(&outcome)))
            }
        }
    }
}
