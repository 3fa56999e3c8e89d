//! Reading rows back into records. JSON columns hold serde values; a value that does not
//! read back is reported as corrupt state, never silently dropped.

use crate::records::{ProcessRef, Round, RoundKind, Task, TaskSummary};
use ganger_events::RoundStatus;
use rusqlite::Row;
use std::path::PathBuf;

pub(crate) const TASK_COLUMNS: &str = "id, slug, agent, model, base, base_commit, branch, worktree, \
    worktree_made, session, owner, generation, keys, timeout_ms, stall_ms, created_at, rounds, \
    last_status, cost_usd, permission, sandbox, network, rw, cleaned_at, resume_note, fork_from, parent, role, inbound, allowed, warm";

pub(crate) const ROUND_COLUMNS: &str = "id, task_id, number, kind, status, reason, model, \
    session_before, session, commander, token, lock_path, host_pid, host_start, agent_pid, \
    agent_start, cgroup, cancel_requested, started_at, progress_at, ended_at, exit_code, \
    exit_signal, summary, snapshot_before, snapshot_after, changed, worktree_changes, checks, \
    rewound, fork_from";

fn corrupt(what: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(std::io::Error::other(what.to_string())))
}

fn json<T: serde::de::DeserializeOwned>(text: &str, column: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text).map_err(|e| corrupt(format!("column {column}: {e}")))
}

fn optional_json<T: serde::de::DeserializeOwned>(
    text: Option<String>,
    column: &str,
) -> rusqlite::Result<Option<T>> {
    text.as_deref().map(|t| json(t, column)).transpose()
}

fn status(text: &str) -> rusqlite::Result<RoundStatus> {
    text.parse().map_err(corrupt)
}

fn process(pid: Option<i32>, start: Option<i64>) -> Option<ProcessRef> {
    Some(ProcessRef {
        pid: pid?,
        start_ticks: u64::try_from(start?).ok()?,
    })
}

pub(crate) fn task(row: &Row<'_>) -> rusqlite::Result<Task> {
    let keys: String = row.get(12)?;
    let last_status: Option<String> = row.get(17)?;
    Ok(Task {
        id: row.get(0)?,
        slug: row.get(1)?,
        agent: row.get(2)?,
        model: row.get(3)?,
        base: row.get(4)?,
        base_commit: row.get(5)?,
        branch: row.get(6)?,
        worktree: PathBuf::from(row.get::<_, String>(7)?),
        worktree_made: row.get(8)?,
        session: row.get(9)?,
        owner: row.get(10)?,
        generation: row.get(11)?,
        keys: json(&keys, "keys")?,
        timeout_ms: row
            .get::<_, Option<i64>>(13)?
            .and_then(|v| u64::try_from(v).ok()),
        stall_ms: row
            .get::<_, Option<i64>>(14)?
            .and_then(|v| u64::try_from(v).ok()),
        created_at: row.get(15)?,
        rounds: row.get(16)?,
        last_status: last_status.as_deref().map(status).transpose()?,
        cost_usd: row.get(18)?,
        permission: row.get(19)?,
        sandbox: row.get(20)?,
        network: row.get(21)?,
        rw: json(&row.get::<_, String>(22)?, "rw")?,
        cleaned_at: row.get(23)?,
        resume_note: row.get(24)?,
        fork_from: optional_json(row.get(25)?, "fork_from")?,
        parent: row.get(26)?,
        role: row.get(27)?,
        inbound: row.get(28)?,
        allowed: json(&row.get::<_, String>(29)?, "allowed")?,
        warm: row.get(30)?,
    })
}

pub(crate) fn round(row: &Row<'_>) -> rusqlite::Result<Round> {
    let kind: String = row.get(3)?;
    let summary: String = row.get(23)?;
    let changed: String = row.get(26)?;
    Ok(Round {
        id: row.get(0)?,
        task_id: row.get(1)?,
        number: row.get(2)?,
        kind: match kind.as_str() {
            "start" => RoundKind::Start,
            "fix" => RoundKind::Fix,
            other => return Err(corrupt(format!("round kind {other:?}"))),
        },
        status: status(&row.get::<_, String>(4)?)?,
        reason: row.get(5)?,
        model: row.get(6)?,
        session_before: row.get(7)?,
        session: row.get(8)?,
        commander: row.get(9)?,
        token: row.get(10)?,
        claim: crate::liveness::ClaimKey::new(row.get::<_, String>(11)?),
        host: process(row.get(12)?, row.get(13)?),
        agent: process(row.get(14)?, row.get(15)?),
        cgroup: row.get::<_, Option<String>>(16)?.map(PathBuf::from),
        cancel_requested: row.get(17)?,
        started_at: row.get(18)?,
        progress_at: row.get(19)?,
        ended_at: row.get(20)?,
        exit_code: row.get(21)?,
        exit_signal: row.get(22)?,
        summary: json(&summary, "summary")?,
        snapshot_before: row.get(24)?,
        snapshot_after: row.get(25)?,
        changed: json(&changed, "changed")?,
        worktree_changes: json(&row.get::<_, String>(27)?, "worktree_changes")?,
        checks: json(&row.get::<_, String>(28)?, "checks")?,
        rewound: row.get(29)?,
        fork_from: optional_json(row.get(30)?, "fork_from")?,
    })
}

pub(crate) fn task_summary(row: &Row<'_>) -> rusqlite::Result<TaskSummary> {
    let last_status: Option<String> = row.get(7)?;
    Ok(TaskSummary {
        slug: row.get(0)?,
        agent: row.get(1)?,
        model: row.get(2)?,
        session: row.get(3)?,
        owner: row.get(4)?,
        worktree: PathBuf::from(row.get::<_, String>(5)?),
        rounds: row.get(6)?,
        last_status: last_status.as_deref().map(status).transpose()?,
        cost_usd: row.get(8)?,
    })
}

/// A journal entry, from `SELECT j.id, j.at, t.slug, j.round, j.kind, j.commander, j.detail`.
pub(crate) fn journal_entry(row: &Row<'_>) -> rusqlite::Result<crate::records::JournalEntry> {
    let detail: String = row.get(6)?;
    Ok(crate::records::JournalEntry {
        id: row.get(0)?,
        at: row.get(1)?,
        slug: row.get(2)?,
        round: row.get(3)?,
        kind: row.get(4)?,
        commander: row.get(5)?,
        // A detail that does not read back is shown as null rather than hiding the entry.
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    })
}
