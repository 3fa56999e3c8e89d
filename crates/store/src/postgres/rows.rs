//! Reading rows back into records. Every integer column is BIGINT (read as i64 and narrowed
//! here); JSON columns hold serde values, and a value that does not read back is reported as
//! corrupt state, never silently dropped.

use crate::error::StoreError;
use crate::records::{JournalEntry, ProcessRef, Round, RoundKind, Task, TaskSummary};
use ganger_events::RoundStatus;
use postgres::Row;
use std::path::PathBuf;

pub(crate) const TASK_COLUMNS: &str = "id, slug, agent, model, base, base_commit, branch, worktree, \
    worktree_made, session, owner, generation, keys, timeout_ms, stall_ms, created_at, rounds, \
    last_status, cost_usd, permission, sandbox, network, rw, cleaned_at, resume_note, fork_from, parent, role, inbound, allowed, warm";

pub(crate) const ROUND_COLUMNS: &str = "id, task_id, number, kind, status, reason, model, \
    session_before, session, commander, token, lock_path, host_pid, host_start, agent_pid, \
    agent_start, cgroup, cancel_requested, started_at, progress_at, ended_at, exit_code, \
    exit_signal, summary, snapshot_before, snapshot_after, changed, worktree_changes, checks, \
    rewound, fork_from";

pub(crate) fn json<T: serde::de::DeserializeOwned>(
    text: &str,
    column: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("column {column}: {e}")))
}

fn optional_json<T: serde::de::DeserializeOwned>(
    text: Option<String>,
    column: &str,
) -> Result<Option<T>, StoreError> {
    text.as_deref().map(|t| json(t, column)).transpose()
}

/// An i64 column narrowed to `T`.
pub(crate) fn narrow<T: TryFrom<i64>>(value: i64, column: &str) -> Result<T, StoreError> {
    T::try_from(value).map_err(|_| StoreError::Corrupt(format!("column {column}: {value}")))
}

pub(crate) fn narrow_opt<T: TryFrom<i64>>(
    value: Option<i64>,
    column: &str,
) -> Result<Option<T>, StoreError> {
    value.map(|v| narrow(v, column)).transpose()
}

fn status(text: &str) -> Result<RoundStatus, StoreError> {
    text.parse()
        .map_err(|e| StoreError::Corrupt(format!("round status: {e}")))
}

fn process(pid: Option<i64>, start: Option<i64>) -> Option<ProcessRef> {
    Some(ProcessRef {
        pid: i32::try_from(pid?).ok()?,
        start_ticks: u64::try_from(start?).ok()?,
    })
}

pub(crate) fn task(row: &Row) -> Result<Task, StoreError> {
    let last_status: Option<String> = row.try_get(17)?;
    Ok(Task {
        id: row.try_get(0)?,
        slug: row.try_get(1)?,
        agent: row.try_get(2)?,
        model: row.try_get(3)?,
        base: row.try_get(4)?,
        base_commit: row.try_get(5)?,
        branch: row.try_get(6)?,
        worktree: PathBuf::from(row.try_get::<_, String>(7)?),
        worktree_made: row.try_get(8)?,
        session: row.try_get(9)?,
        owner: row.try_get(10)?,
        generation: row.try_get(11)?,
        keys: json(row.try_get(12)?, "keys")?,
        timeout_ms: row
            .try_get::<_, Option<i64>>(13)?
            .and_then(|v| u64::try_from(v).ok()),
        stall_ms: row
            .try_get::<_, Option<i64>>(14)?
            .and_then(|v| u64::try_from(v).ok()),
        created_at: row.try_get(15)?,
        rounds: narrow(row.try_get(16)?, "rounds")?,
        last_status: last_status.as_deref().map(status).transpose()?,
        cost_usd: row.try_get(18)?,
        permission: row.try_get(19)?,
        sandbox: row.try_get(20)?,
        network: row.try_get(21)?,
        rw: json(row.try_get(22)?, "rw")?,
        cleaned_at: row.try_get(23)?,
        resume_note: row.try_get(24)?,
        fork_from: optional_json(row.try_get(25)?, "fork_from")?,
        parent: row.try_get(26)?,
        role: row.try_get(27)?,
        inbound: row.try_get(28)?,
        allowed: json(row.try_get(29)?, "allowed")?,
        warm: row.try_get(30)?,
    })
}

pub(crate) fn round(row: &Row) -> Result<Round, StoreError> {
    let kind: String = row.try_get(3)?;
    Ok(Round {
        id: row.try_get(0)?,
        task_id: row.try_get(1)?,
        number: narrow(row.try_get(2)?, "number")?,
        kind: match kind.as_str() {
            "start" => RoundKind::Start,
            "fix" => RoundKind::Fix,
            other => return Err(StoreError::Corrupt(format!("round kind {other:?}"))),
        },
        status: status(row.try_get(4)?)?,
        reason: row.try_get(5)?,
        model: row.try_get(6)?,
        session_before: row.try_get(7)?,
        session: row.try_get(8)?,
        commander: row.try_get(9)?,
        token: row.try_get(10)?,
        claim: crate::liveness::ClaimKey::new(row.try_get::<_, String>(11)?),
        host: process(row.try_get(12)?, row.try_get(13)?),
        agent: process(row.try_get(14)?, row.try_get(15)?),
        cgroup: row.try_get::<_, Option<String>>(16)?.map(PathBuf::from),
        cancel_requested: row.try_get(17)?,
        started_at: row.try_get(18)?,
        progress_at: row.try_get(19)?,
        ended_at: row.try_get(20)?,
        exit_code: narrow_opt(row.try_get(21)?, "exit_code")?,
        exit_signal: narrow_opt(row.try_get(22)?, "exit_signal")?,
        summary: json(row.try_get(23)?, "summary")?,
        snapshot_before: row.try_get(24)?,
        snapshot_after: row.try_get(25)?,
        changed: json(row.try_get(26)?, "changed")?,
        worktree_changes: json(row.try_get(27)?, "worktree_changes")?,
        checks: json(row.try_get(28)?, "checks")?,
        rewound: row.try_get(29)?,
        fork_from: optional_json(row.try_get(30)?, "fork_from")?,
    })
}

pub(crate) fn task_summary(row: &Row) -> Result<TaskSummary, StoreError> {
    let last_status: Option<String> = row.try_get(7)?;
    Ok(TaskSummary {
        slug: row.try_get(0)?,
        agent: row.try_get(1)?,
        model: row.try_get(2)?,
        session: row.try_get(3)?,
        owner: row.try_get(4)?,
        worktree: PathBuf::from(row.try_get::<_, String>(5)?),
        rounds: narrow(row.try_get(6)?, "rounds")?,
        last_status: last_status.as_deref().map(status).transpose()?,
        cost_usd: row.try_get(8)?,
    })
}

/// The columns a journal entry is read from, `j` being the journal and `t` its task.
pub(crate) const JOURNAL_COLUMNS: &str =
    "j.id, j.at, t.slug, j.round, j.kind, j.commander, j.detail";

/// A journal entry, from [`JOURNAL_COLUMNS`].
pub(crate) fn journal_entry(row: &Row) -> Result<JournalEntry, StoreError> {
    let detail: String = row.try_get(6)?;
    Ok(JournalEntry {
        id: row.try_get(0)?,
        at: row.try_get(1)?,
        slug: row.try_get(2)?,
        round: narrow_opt(row.try_get(3)?, "round")?,
        kind: row.try_get(4)?,
        commander: row.try_get(5)?,
        // A detail that does not read back is shown as null rather than hiding the entry.
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    })
}

/// Every row read into a record.
pub(crate) fn all<T>(
    rows: Vec<Row>,
    read: impl Fn(&Row) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.iter().map(read).collect()
}
