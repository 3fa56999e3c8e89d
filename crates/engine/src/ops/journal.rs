//! The commander's journal: `ganger watch` shows what happened to the commander's tasks
//! since its cursor (a task started, a round finished or failed, checks failed, files
//! overlapping another task, a transfer, a budget reached; a round's `DONE:` line carried in
//! its entry), and `ganger ack N` moves the cursor past entry N, so those entries are not
//! shown again. The cursor is in the store, per commander.

use crate::base::error::{EngineError, Result};
use crate::base::notice::Notice;
use crate::env::workspace::Workspace;
use crate::evidence::report::local_time;
use ganger_store::{FailedCheck, JournalEntry, JournalEvent, OwnerMove};
use serde::Serialize;
use serde_json::Value;

/// The schema of `ganger watch --json` (one document; one entry per line with `--follow`).
pub const JOURNAL_SCHEMA: &str = "ganger.journal/1";
/// The schema of `ganger ack --json`.
pub const ACK_SCHEMA: &str = "ganger.ack/1";
/// The most entries one look returns.
const PAGE: u32 = 1000;

/// One entry of a commander's journal.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WatchEntry {
    /// The entry's number: `ganger ack` takes it.
    pub id: i64,
    pub at: String,
    pub task: Option<String>,
    pub round: Option<u32>,
    /// `task-created`, `round-finished`, `checks-failed`, `overlap`, `budget-hit`,
    /// `transferred`, `assigned`, `released`, `merged`, `rewound`, `cleaned`,
    /// `cancel-requested`, ...
    pub kind: String,
    /// Who did it.
    pub commander: Option<String>,
    /// The entry in one line.
    pub summary: String,
    /// The round's `DONE:` line, for a round's end.
    pub done: Option<String>,
    pub detail: Value,
}

/// What `ganger watch` shows.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JournalPage {
    pub schema: &'static str,
    pub commander: String,
    /// The commander's cursor: entries up to it were acknowledged.
    pub cursor: i64,
    pub entries: Vec<WatchEntry>,
}

/// What `ganger ack` did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AckReport {
    pub schema: &'static str,
    pub commander: String,
    /// The cursor now (never moved backwards).
    pub cursor: i64,
}

fn text(detail: &Value, key: &str) -> Option<String> {
    detail.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// An entry's one-line summary, from the event it records (read back by serde); an entry
/// this build does not read is shown by its kind and detail.
fn summarize(entry: &JournalEntry) -> String {
    let round = entry
        .round
        .map_or_else(String::new, |n| format!("round {n} "));
    let Some(event) = entry.event() else {
        return as_stored(entry, &round);
    };
    match event {
        JournalEvent::TaskCreated { agent, model, .. } => format!(
            "task started (agent {agent}{})",
            model.map_or_else(String::new, |m| format!(", model {m}"))
        ),
        JournalEvent::RoundFinished { status, reason, .. } => match reason {
            Some(reason) => format!("{round}{status}: {reason}"),
            None => format!("{round}{status}"),
        },
        JournalEvent::ChecksFailed { checks } => {
            let checks: Vec<String> = checks.iter().map(failed_check).collect();
            format!("{round}checks failed: {}", checks.join(", "))
        }
        JournalEvent::Overlap { with } => {
            let with: Vec<String> = with
                .iter()
                .map(|o| format!("{} ({})", o.task, o.files.join(", ")))
                .collect();
            format!(
                "{round}changes files another task changes: {}",
                with.join("; ")
            )
        }
        JournalEvent::BudgetHit { reason, .. } => format!("{round}stopped: {reason}"),
        JournalEvent::Transferred(moved)
        | JournalEvent::Assigned(moved)
        | JournalEvent::Released(moved) => owner_change(&entry.kind, &moved),
        JournalEvent::CancelRequested {} => format!("{round}cancel requested"),
        JournalEvent::Policy { inbound } => format!("new rounds: {inbound}"),
        JournalEvent::Allowed { allowed } if allowed.is_empty() => {
            "only the owner may send rounds".to_owned()
        }
        JournalEvent::Allowed { allowed } => {
            format!("allowed to send rounds: {}", allowed.join(", "))
        }
        JournalEvent::Adopted { session, .. } => format!("adopted (session {session})"),
        JournalEvent::Moved(detail) => format!(
            "moved to {} ({})",
            text(&detail, "host").unwrap_or_else(|| "another host".into()),
            text(&detail, "session").unwrap_or_else(|| "its session came along".into())
        ),
        JournalEvent::Attached { .. } => "a person attached to the session".to_owned(),
        JournalEvent::Detached { .. } => "the person attached to the session left".to_owned(),
        JournalEvent::Merged(_) => "merged into its base".to_owned(),
        JournalEvent::CleanStarted {} => "clean started".to_owned(),
        JournalEvent::Cleaned(detail) => cleaned(&detail),
        JournalEvent::QueueRefused(item) | JournalEvent::QueueStale(item) => format!(
            "a queued {} was not delivered: {}",
            item.kind.as_str(),
            item.reason.unwrap_or_else(|| "refused".into())
        ),
        JournalEvent::LandQueued(detail) => format!(
            "queued to land on {}",
            text(&detail, "base").unwrap_or_default()
        ),
        JournalEvent::Landed(detail) => format!(
            "landed on {} in batch {}",
            text(&detail, "base").unwrap_or_default(),
            detail["batch"]
        ),
        JournalEvent::LandReturned(detail) => format!(
            "sent back from the merge queue: {}",
            text(&detail, "reason").unwrap_or_default()
        ),
        JournalEvent::LandStep(detail) => format!(
            "lander: batch {} on {}: {}",
            detail["batch"],
            text(&detail, "base").unwrap_or_default(),
            text(&detail, "step").unwrap_or_default()
        ),
        JournalEvent::Conflict(detail) => format!(
            "{round}conflicts with {}: {}",
            other_of(&detail, entry),
            conflict_files(&detail)
        ),
        JournalEvent::ConflictCleared(detail) => {
            format!(
                "{round}no longer conflicts with {}",
                other_of(&detail, entry)
            )
        }
        JournalEvent::RaceEnded(detail) => format!(
            "race {} ended: {}",
            text(&detail, "race").unwrap_or_default(),
            text(&detail, "line").unwrap_or_else(|| "see `ganger status`".into())
        ),
        JournalEvent::RoundStarted { .. } | JournalEvent::Rewound(_) => as_stored(entry, &round),
    }
}

/// The other side of a conflict entry: the task of the pair that is not the entry's, or the
/// base.
fn other_of(detail: &Value, entry: &JournalEntry) -> String {
    let tasks: Vec<&str> = detail["tasks"]
        .as_array()
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mine = entry.slug.as_deref().unwrap_or_default();
    tasks
        .iter()
        .find(|t| **t != mine)
        .map_or_else(|| "another task".to_owned(), |t| (*t).to_owned())
}

/// A conflict's files and lines: `src/a.rs (lines 10-24)`.
fn conflict_files(detail: &Value) -> String {
    let files: Vec<String> = detail["files"]
        .as_array()
        .map(|files| {
            files
                .iter()
                .map(|f| {
                    let path = f["path"].as_str().unwrap_or_default();
                    let lines: Vec<String> = f["lines"]
                        .as_array()
                        .map(|l| l.iter().map(|r| format!("{}-{}", r[0], r[1])).collect())
                        .unwrap_or_default();
                    if lines.is_empty() {
                        path.to_owned()
                    } else {
                        format!("{path} (lines {})", lines.join(", "))
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    files.join(", ")
}

/// A failed check as `checks-failed` lists it.
fn failed_check(check: &FailedCheck) -> String {
    let name = &check.name;
    match check.exit_code {
        _ if check.timed_out => format!("{name} (timed out)"),
        Some(code) => format!("{name} (exit {code})"),
        None => name.clone(),
    }
}

/// A transfer, an assignment or a release.
fn owner_change(kind: &str, moved: &OwnerMove) -> String {
    let name = |name: &str| (!name.is_empty()).then(|| name.to_owned());
    match (kind, name(&moved.from), name(&moved.to)) {
        ("released", Some(from), _) => format!("released by {from}"),
        (kind, Some(from), Some(to)) => format!("{kind} from {from} to {to}"),
        (kind, None, Some(to)) => format!("{kind} to {to}"),
        (kind, _, None) => format!("{kind}, now owned by nobody"),
    }
}

/// What `clean` removed and kept, from its report.
fn cleaned(detail: &Value) -> String {
    let listed = |key: &str| -> Vec<String> {
        detail[key]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| {
                        format!(
                            "{} {}",
                            i["kind"].as_str().unwrap_or("?"),
                            i["name"].as_str().unwrap_or("?")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (removed, kept) = (listed("removed"), listed("kept"));
    let mut line = format!("cleaned: removed {}", join_or_nothing(&removed));
    if !kept.is_empty() {
        line.push_str(&format!("; kept {}", kept.join(", ")));
    }
    line
}

/// An entry by its kind and detail as stored.
fn as_stored(entry: &JournalEntry, round: &str) -> String {
    let detail = &entry.detail;
    let shown = if detail.as_object().is_some_and(|o| !o.is_empty()) {
        format!(" {detail}")
    } else {
        String::new()
    };
    format!("{round}{}{shown}", entry.kind)
}

fn join_or_nothing(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".to_owned()
    } else {
        items.join(", ")
    }
}

fn entry(journal: JournalEntry) -> WatchEntry {
    let done = match journal.event() {
        Some(JournalEvent::RoundFinished { done, .. }) => done,
        _ => None,
    };
    WatchEntry {
        summary: summarize(&journal),
        done,
        id: journal.id,
        at: local_time(journal.at),
        task: journal.slug,
        round: journal.round,
        kind: journal.kind,
        commander: journal.commander,
        detail: journal.detail,
    }
}

/// `commander`'s journal after `after` (default: its cursor; never before it); with
/// `settle`, rounds whose host died are settled first so that their ends are in it.
pub fn watch(
    ws: &Workspace,
    commander: Option<&str>,
    after: Option<i64>,
    settle: bool,
) -> Result<JournalPage> {
    let commander = crate::base::commander::commander(commander);
    let Some(mut store) = ws.existing_store()? else {
        return Ok(JournalPage {
            schema: JOURNAL_SCHEMA,
            commander,
            cursor: 0,
            entries: Vec::new(),
        });
    };
    if settle {
        crate::round::reaper::settle_running(ws, &mut *store, &mut |_: Notice| {})?;
    }
    let cursor = store.journal_cursor(&commander)?;
    let entries = store
        .commander_journal(&commander, after.unwrap_or(cursor).max(cursor), PAGE)?
        .into_iter()
        .map(entry)
        .collect();
    Ok(JournalPage {
        schema: JOURNAL_SCHEMA,
        commander,
        cursor,
        entries,
    })
}

/// `ganger ack N`: `commander` has read its journal up to entry `upto`.
pub fn ack(ws: &Workspace, commander: Option<&str>, upto: i64) -> Result<AckReport> {
    let commander = crate::base::commander::commander(commander);
    let mut store = ws.existing_store()?;
    let last = match &store {
        Some(store) => store.last_journal_id()?,
        None => 0,
    };
    if upto < 0 || upto > last {
        return Err(EngineError::invalid(format!(
            "no journal entry {upto}: the journal's last entry is {last}"
        ))
        .hint("`ganger watch` lists the entries with their numbers"));
    }
    let cursor = match &mut store {
        Some(store) => store.ack_journal(&commander, upto)?,
        None => 0,
    };
    Ok(AckReport {
        schema: ACK_SCHEMA,
        commander,
        cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn journal(kind: &str, round: Option<u32>, detail: Value) -> JournalEntry {
        JournalEntry {
            id: 1,
            at: 0,
            slug: Some("t".into()),
            round,
            kind: kind.into(),
            commander: Some("me".into()),
            detail,
        }
    }

    #[test]
    fn entries_read_as_one_line_each() {
        let cases = [
            (
                journal(
                    "round-finished",
                    Some(2),
                    json!({"status": "done", "reason": null, "done": "DONE: ok"}),
                ),
                "round 2 done",
            ),
            (
                journal(
                    "round-finished",
                    Some(1),
                    json!({"status": "stalled", "reason": "no progress"}),
                ),
                "round 1 stalled: no progress",
            ),
            (
                journal(
                    "checks-failed",
                    Some(3),
                    json!({"checks": [{"name": "test", "exit_code": 1, "timed_out": false}, {"name": "lint", "exit_code": null, "timed_out": true}]}),
                ),
                "round 3 checks failed: test (exit 1), lint (timed out)",
            ),
            (
                journal(
                    "overlap",
                    Some(1),
                    json!({"with": [{"task": "other", "files": ["a", "b"]}]}),
                ),
                "round 1 changes files another task changes: other (a, b)",
            ),
            (
                journal(
                    "budget-hit",
                    Some(4),
                    json!({"reason": "budget of 100 tokens for task t reached (spent 110)"}),
                ),
                "round 4 stopped: budget of 100 tokens for task t reached (spent 110)",
            ),
            (
                journal("transferred", None, json!({"from": "a", "to": "b"})),
                "transferred from a to b",
            ),
            (
                journal(
                    "task-created",
                    None,
                    json!({"agent": "a-cli", "model": "mock/scripted"}),
                ),
                "task started (agent a-cli, model mock/scripted)",
            ),
        ];
        for (entry, expected) in cases {
            assert_eq!(summarize(&entry), expected);
        }
        let done = super::entry(journal(
            "round-finished",
            Some(2),
            json!({"status": "done", "done": "DONE: ok"}),
        ));
        assert_eq!(done.done.as_deref(), Some("DONE: ok"));
    }
}
