//! The journal: one entry per thing that happened to a task, in the order it happened, each a
//! [`JournalEvent`]. An event is written once, by serde, as the entry's `kind` (its variant's
//! name in kebab-case) and `detail` (its fields as a JSON object), which is what `ganger
//! watch --json` and `/api/journal` show (`docs/json.md`, "Kinds and their `detail`"); reading
//! it back is serde too ([`JournalEntry::event`]). The entry keeps its `kind` and `detail` as
//! stored, so an entry is shown as written even when this build reads it differently (an
//! older ganger's, or a kind it does not know).
//!
//! What a command did (`cleaned`, `merged`, `rewound`, `moved`) is that command's own report,
//! carried as JSON: the store does not know the engine's report types. A field that a reader
//! can do without (`tokens` of a budget hit, ...) reads as its default when an entry lacks it.

use crate::error::StoreError;
use crate::queue::QueueKind;
use crate::records::RoundKind;
use ganger_events::RoundStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// One entry of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    pub id: i64,
    pub at: i64,
    pub slug: Option<String>,
    pub round: Option<u32>,
    /// The event's kind, as stored.
    pub kind: String,
    pub commander: Option<String>,
    /// The event's fields, as stored (null when they did not read back as JSON).
    pub detail: Value,
}

impl JournalEntry {
    /// The event the entry records; `None` for a kind this build does not know, or a detail
    /// it does not read.
    pub fn event(&self) -> Option<JournalEvent> {
        let stored = serde_json::json!({ "kind": self.kind, "detail": self.detail });
        serde_json::from_value(stored).ok()
    }
}

/// What happened, with what the journal keeps of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "kebab-case")]
pub enum JournalEvent {
    /// A task was recorded (`start`, `plan`, a pipeline's role).
    TaskCreated {
        agent: String,
        model: Option<String>,
        #[serde(default)]
        worktree: PathBuf,
    },
    /// A round began.
    RoundStarted {
        kind: RoundKind,
        model: Option<String>,
    },
    /// A round ended; `done` is its `DONE:` line.
    RoundFinished {
        status: RoundStatus,
        reason: Option<String>,
        done: Option<String>,
    },
    /// Checks of a round failed.
    ChecksFailed { checks: Vec<FailedCheck> },
    /// A round's work changes files that other tasks' open work changes.
    Overlap { with: Vec<OverlappingTask> },
    /// The round's host stopped it for a budget.
    BudgetHit {
        reason: String,
        cost_usd: Option<f64>,
        #[serde(default)]
        tokens: u64,
    },
    /// The owner gave the task to another commander.
    Transferred(OwnerMove),
    /// A commander took the task (or gave one it owns).
    Assigned(OwnerMove),
    /// The owner let the task go.
    Released(OwnerMove),
    /// The task's inbound policy changed.
    Policy { inbound: String },
    /// The commanders the task lets in besides its owner changed.
    Allowed { allowed: Vec<String> },
    /// A task was recorded for a session a person started.
    Adopted {
        session: String,
        #[serde(default)]
        worktree: PathBuf,
    },
    /// A person attached to the task's session (`ganger attach`)...
    Attached {
        #[serde(default)]
        session: String,
        #[serde(default)]
        program: PathBuf,
    },
    /// ... and left it.
    Detached {
        #[serde(default)]
        exit_code: i32,
    },
    /// Someone asked the running round to stop.
    CancelRequested {},
    /// A clean of the task began (before anything is removed).
    CleanStarted {},
    /// `clean` cleaned up after the task: its report's entry for the task.
    Cleaned(Value),
    /// The task's work was merged into its base: the merge's mode, commits and rounds.
    Merged(Value),
    /// The task went back to round `to`: how, with the rounds marked rewound.
    Rewound(Value),
    /// The task's worktree was made on another host: which, and whether the session came.
    Moved(Value),
    /// A queued round was refused at delivery.
    QueueRefused(Undelivered),
    /// A queued round was queued under a generation that is no longer the task's.
    QueueStale(Undelivered),
    /// The task was queued to land on its base (`ganger land`): base, commit, priority.
    LandQueued(Value),
    /// The task landed on its base in a batch: the batch, the base's new tip.
    Landed(Value),
    /// The task was sent back from the merge queue: why (a conflict, a culprit), with the
    /// conflicting files or the failing check's output.
    LandReturned(Value),
    /// A step of a lander's batch (taken, a check run, flaky checks, moved, abandoned): an
    /// entry of no task, by the lander's commander.
    LandStep(Value),
    /// Predicted at a round's end: the task's work conflicts with another open task's (or its
    /// base's head): `tasks`, `with_base`, `files` with their lines. Once per pair.
    Conflict(Value),
    /// A pair recorded as conflicting no longer does (a later round resolved it).
    ConflictCleared(Value),
    /// A race ended (on its winner's task, else its first attempt's): won or failed, the
    /// winner and the rule that decided.
    RaceEnded(Value),
}

/// A check that failed, as `checks-failed` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCheck {
    pub name: String,
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
}

/// Another task whose open work changes some of the same files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlappingTask {
    pub task: String,
    pub files: Vec<String>,
}

/// An ownership change: from whom, to whom (empty for nobody), and the task's generation
/// after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerMove {
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub generation: i64,
}

/// A queued round the scheduler did not deliver: the item, its kind and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undelivered {
    pub item: i64,
    pub kind: QueueKind,
    pub reason: Option<String>,
}

impl JournalEvent {
    /// The event as stored: its kind and its detail (a JSON object's text).
    pub(crate) fn stored(&self) -> Result<(String, String), StoreError> {
        let unwritable = |why: String| StoreError::Corrupt(format!("a journal entry: {why}"));
        let Value::Object(mut fields) =
            serde_json::to_value(self).map_err(|e| unwritable(e.to_string()))?
        else {
            return Err(unwritable("not an object".into()));
        };
        let Some(Value::String(kind)) = fields.remove("kind") else {
            return Err(unwritable("no kind".into()));
        };
        let detail = fields
            .remove("detail")
            .unwrap_or_else(|| serde_json::json!({}));
        Ok((kind, detail.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(kind: &str, detail: Value) -> JournalEntry {
        JournalEntry {
            id: 1,
            at: 0,
            slug: Some("t".into()),
            round: None,
            kind: kind.into(),
            commander: None,
            detail,
        }
    }

    #[test]
    fn an_event_is_stored_as_its_kind_and_detail_and_reads_back() {
        let cases = [
            (
                JournalEvent::RoundStarted {
                    kind: RoundKind::Fix,
                    model: None,
                },
                "round-started",
                json!({"kind": "fix", "model": null}),
            ),
            (
                JournalEvent::RoundFinished {
                    status: RoundStatus::TimedOut,
                    reason: Some("past 1s".into()),
                    done: None,
                },
                "round-finished",
                json!({"status": "timed-out", "reason": "past 1s", "done": null}),
            ),
            (
                JournalEvent::Transferred(OwnerMove {
                    from: "a".into(),
                    to: String::new(),
                    generation: 3,
                }),
                "transferred",
                json!({"from": "a", "to": "", "generation": 3}),
            ),
            (
                JournalEvent::CancelRequested {},
                "cancel-requested",
                json!({}),
            ),
            (
                JournalEvent::Merged(json!({"mode": "squash"})),
                "merged",
                json!({"mode": "squash"}),
            ),
            (
                JournalEvent::QueueStale(Undelivered {
                    item: 4,
                    kind: QueueKind::Fix,
                    reason: None,
                }),
                "queue-stale",
                json!({"item": 4, "kind": "fix", "reason": null}),
            ),
        ];
        for (event, kind, detail) in cases {
            let (stored_kind, stored_detail) = event.stored().unwrap();
            let stored_detail: Value = serde_json::from_str(&stored_detail).unwrap();
            assert_eq!((stored_kind.as_str(), &stored_detail), (kind, &detail));
            assert_eq!(entry(kind, detail).event(), Some(event));
        }
    }

    #[test]
    fn an_entry_this_build_cannot_read_keeps_what_was_stored() {
        assert_eq!(entry("renamed", json!({"a": 1})).event(), None);
        assert_eq!(entry("policy", json!({"inbound": 7})).event(), None);
        assert_eq!(
            entry("transferred", json!({"from": "a", "to": "b"})).event(),
            Some(JournalEvent::Transferred(OwnerMove {
                from: "a".into(),
                to: "b".into(),
                generation: 0,
            }))
        );
    }
}
