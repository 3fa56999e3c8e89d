//! Rounds as rows: their columns, how a row reads back into a [`Round`], and how a round
//! begins (at most one running per task, held by the store's own check and its unique index).

use super::row::Row;
use super::tasks::{process, status};
use super::{Param, Sql, bind, journal};
use crate::error::StoreError;
use crate::journal::JournalEvent;
use crate::liveness::ClaimKey;
use crate::records::{NewRound, Round, RoundKind, now_ms};

/// A round's columns, in the order [`round`] reads them.
pub(crate) const ROUND_COLUMNS: &str = "id, task_id, number, kind, status, reason, model, \
    session_before, session, commander, token, lock_path, host_pid, host_start, agent_pid, \
    agent_start, cgroup, cancel_requested, started_at, progress_at, ended_at, exit_code, \
    exit_signal, summary, snapshot_before, snapshot_after, changed, worktree_changes, checks, \
    rewound, fork_from";

/// A round, from [`ROUND_COLUMNS`].
pub(crate) fn round(row: &dyn Row) -> Result<Round, StoreError> {
    let kind: String = row.get(3)?;
    Ok(Round {
        id: row.get(0)?,
        task_id: row.get(1)?,
        number: row.get(2)?,
        kind: match kind.as_str() {
            "start" => RoundKind::Start,
            "fix" => RoundKind::Fix,
            other => return Err(StoreError::Corrupt(format!("round kind {other:?}"))),
        },
        status: status(&row.get::<String>(4)?)?,
        reason: row.get(5)?,
        model: row.get(6)?,
        session_before: row.get(7)?,
        session: row.get(8)?,
        commander: row.get(9)?,
        token: row.get(10)?,
        claim: ClaimKey::new(row.get::<String>(11)?),
        host: process(row.get(12)?, row.get(13)?),
        agent: process(row.get(14)?, row.get(15)?),
        cgroup: row.get(16)?,
        cancel_requested: row.get(17)?,
        started_at: row.get(18)?,
        progress_at: row.get(19)?,
        ended_at: row.get(20)?,
        exit_code: row.get(21)?,
        exit_signal: row.get(22)?,
        summary: row.json(23, "summary")?,
        snapshot_before: row.get(24)?,
        snapshot_after: row.get(25)?,
        changed: row.json(26, "changed")?,
        worktree_changes: row.json(27, "worktree_changes")?,
        checks: row.json(28, "checks")?,
        rewound: row.get(29)?,
        fork_from: row.opt_json(30, "fork_from")?,
    })
}

/// The round numbered `id`.
pub(crate) fn load_round(sql: &mut dyn Sql, id: i64) -> Result<Round, StoreError> {
    sql.one(
        &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE id = ?1"),
        &bind![id],
        round,
    )
}

/// Round `number` of the task (its last with `None`).
pub(crate) fn round_of(
    sql: &mut dyn Sql,
    task_id: i64,
    number: Option<u32>,
) -> Result<Option<Round>, StoreError> {
    match number {
        Some(number) => sql.first(
            &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = ?1 AND number = ?2"),
            &bind![task_id, number],
            round,
        ),
        None => sql.first(
            &format!(
                "SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = ?1 \
                 ORDER BY number DESC LIMIT 1"
            ),
            &bind![task_id],
            round,
        ),
    }
}

/// The number and host pid of the task's running round, if one runs.
pub(crate) fn running_round(
    sql: &mut dyn Sql,
    task_id: i64,
) -> Result<Option<(u32, Option<i32>)>, StoreError> {
    sql.first(
        "SELECT number, host_pid FROM rounds WHERE task_id = ?1 AND status = 'running'",
        &bind![task_id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
}

/// `Busy` when a round of the task runs.
pub(crate) fn refuse_busy(sql: &mut dyn Sql, task_id: i64, slug: &str) -> Result<(), StoreError> {
    match running_round(sql, task_id)? {
        Some((number, host_pid)) => Err(StoreError::Busy {
            slug: slug.to_owned(),
            number,
            host_pid,
        }),
        None => Ok(()),
    }
}

/// Begins the task's next round, running, with its journal entry; `Busy` when one runs.
pub(crate) fn insert_round(
    sql: &mut dyn Sql,
    task_id: i64,
    slug: &str,
    new: &NewRound,
) -> Result<i64, StoreError> {
    refuse_busy(sql, task_id, slug)?;
    let number: u32 = sql.value(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM rounds WHERE task_id = ?1",
        &bind![task_id],
    )?;
    let inserted = sql.value(
        "INSERT INTO rounds (task_id, number, kind, status, model, session_before, commander, \
         token, lock_path, host_pid, host_start, started_at, snapshot_before, checks) \
         VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id",
        &[
            Param::from(task_id),
            Param::from(number),
            Param::from(new.kind.as_str()),
            Param::from(new.model.as_deref()),
            Param::from(new.session_before.as_deref()),
            Param::from(&new.commander),
            Param::from(&new.token),
            Param::from(new.claim.as_str()),
            Param::from(new.host.map(|h| h.pid)),
            Param::from(new.host.map(|h| h.start_ticks)),
            Param::from(now_ms()),
            Param::from(new.snapshot_before.as_deref()),
            Param::json(&new.checks)?,
        ],
    );
    let id: i64 = match inserted {
        // A concurrent writer the busy check could not see still hits the unique index.
        Err(e) if sql.is_unique_violation(&e) => {
            return Err(StoreError::Busy {
                slug: slug.to_owned(),
                number: number.saturating_sub(1),
                host_pid: None,
            });
        }
        other => other?,
    };
    // A fork point a rewind left is this round's to use.
    sql.execute(
        "UPDATE rounds SET fork_from = (SELECT fork_from FROM tasks WHERE id = ?2) WHERE id = ?1",
        &bind![id, task_id],
    )?;
    sql.execute(
        "UPDATE tasks SET rounds = ?2, last_status = 'running', resume_note = NULL, \
         fork_from = NULL WHERE id = ?1",
        &bind![task_id, number],
    )?;
    let started = JournalEvent::RoundStarted {
        kind: new.kind,
        model: new.model.clone(),
    };
    journal::append(sql, task_id, Some(number), Some(&new.commander), &started)?;
    Ok(id)
}
