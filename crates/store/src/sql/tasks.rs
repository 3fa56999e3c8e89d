//! Tasks as rows: their columns, how a row reads back into a [`Task`] (or the
//! [`TaskSummary`] a table shows), and how a new task is recorded with what comes with it.

use super::row::Row;
use super::{Param, Sql, bind, journal};
use crate::error::StoreError;
use crate::journal::JournalEvent;
use crate::records::{NewTask, ProcessRef, Task, TaskSummary, now_ms};
use ganger_events::RoundStatus;

/// A task's columns, in the order [`task`] reads them.
pub(crate) const TASK_COLUMNS: &str = "id, slug, agent, model, base, base_commit, branch, worktree, \
    worktree_made, session, owner, generation, keys, timeout_ms, stall_ms, created_at, rounds, \
    last_status, cost_usd, permission, sandbox, network, rw, cleaned_at, resume_note, fork_from, \
    parent, role, inbound, allowed, warm, allow";

/// A round status as stored.
pub(crate) fn status(text: &str) -> Result<RoundStatus, StoreError> {
    text.parse()
        .map_err(|e| StoreError::Corrupt(format!("round status: {e}")))
}

/// A setting of a task's as stored (its permission, sandbox, network), read once here.
fn setting<T: std::str::FromStr<Err = String>>(text: String) -> Result<T, StoreError> {
    text.parse()
        .map_err(|e| StoreError::Corrupt(format!("task setting: {e}")))
}

/// A task's last status as stored.
fn last_status(text: Option<String>) -> Result<Option<RoundStatus>, StoreError> {
    text.as_deref().map(status).transpose()
}

/// A limit in ms as stored (a negative one reads as none).
fn millis(value: Option<i64>) -> Option<u64> {
    value.and_then(|v| u64::try_from(v).ok())
}

/// A process as stored, from its pid and start columns.
pub(crate) fn process(pid: Option<i64>, start: Option<i64>) -> Option<ProcessRef> {
    Some(ProcessRef {
        pid: i32::try_from(pid?).ok()?,
        start_ticks: u64::try_from(start?).ok()?,
    })
}

/// A task, from [`TASK_COLUMNS`].
pub(crate) fn task(row: &dyn Row) -> Result<Task, StoreError> {
    Ok(Task {
        id: row.get(0)?,
        slug: row.get(1)?,
        agent: row.get(2)?,
        model: row.get(3)?,
        base: row.get(4)?,
        base_commit: row.get(5)?,
        branch: row.get(6)?,
        worktree: row.get(7)?,
        worktree_made: row.get(8)?,
        session: row.get(9)?,
        owner: row.get(10)?,
        generation: row.get(11)?,
        keys: row.json(12, "keys")?,
        timeout_ms: millis(row.get(13)?),
        stall_ms: millis(row.get(14)?),
        created_at: row.get(15)?,
        rounds: row.get(16)?,
        last_status: last_status(row.get(17)?)?,
        cost_usd: row.get(18)?,
        permission: setting(row.get(19)?)?,
        sandbox: setting(row.get(20)?)?,
        network: setting(row.get(21)?)?,
        rw: row.json(22, "rw")?,
        cleaned_at: row.get(23)?,
        resume_note: row.get(24)?,
        fork_from: row.opt_json(25, "fork_from")?,
        parent: row.get(26)?,
        role: row.get(27)?,
        inbound: row.get(28)?,
        allowed: row.json(29, "allowed")?,
        warm: row.get(30)?,
        allow: row.json(31, "allow")?,
    })
}

/// What the task table shows of every task, by slug.
pub(crate) const TASK_SUMMARIES: &str = "SELECT slug, agent, model, session, owner, worktree, \
    rounds, last_status, cost_usd FROM tasks ORDER BY slug";

/// A row of [`TASK_SUMMARIES`].
pub(crate) fn task_summary(row: &dyn Row) -> Result<TaskSummary, StoreError> {
    Ok(TaskSummary {
        slug: row.get(0)?,
        agent: row.get(1)?,
        model: row.get(2)?,
        session: row.get(3)?,
        owner: row.get(4)?,
        worktree: row.get(5)?,
        rounds: row.get(6)?,
        last_status: last_status(row.get(7)?)?,
        cost_usd: row.get(8)?,
    })
}

/// The task numbered `id`.
pub(crate) fn load_task(sql: &mut dyn Sql, id: i64) -> Result<Task, StoreError> {
    sql.one(
        &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
        &bind![id],
        task,
    )
}

/// The task named `slug`.
pub(crate) fn task_by_slug(sql: &mut dyn Sql, slug: &str) -> Result<Option<Task>, StoreError> {
    sql.first(
        &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE slug = ?1"),
        &bind![slug],
        task,
    )
}

/// Inserts a task (no round) with its journal entry; `SlugTaken` when the slug is used.
pub(crate) fn insert_task(sql: &mut dyn Sql, new: &NewTask) -> Result<i64, StoreError> {
    let inserted = sql.value(
        "INSERT INTO tasks (slug, agent, model, base, base_commit, branch, worktree, \
         worktree_made, owner, keys, timeout_ms, stall_ms, created_at, permission, sandbox, \
         network, rw, warm, allow) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, \
         ?19) \
         RETURNING id",
        &[
            Param::from(&new.slug),
            Param::from(&new.agent),
            Param::from(new.model.as_deref()),
            Param::from(&new.base),
            Param::from(new.base_commit.as_deref()),
            Param::from(&new.branch),
            Param::from(&new.worktree),
            Param::from(new.worktree_made),
            Param::from(&new.owner),
            Param::json(&new.keys)?,
            Param::from(new.timeout_ms),
            Param::from(new.stall_ms),
            Param::from(now_ms()),
            Param::from(new.permission.as_str()),
            Param::from(new.sandbox.as_str()),
            Param::from(new.network.as_str()),
            Param::json(&new.rw)?,
            Param::from(new.warm),
            Param::json(&new.allow)?,
        ],
    );
    let task_id: i64 = match inserted {
        Err(e) if sql.is_unique_violation(&e) => {
            return Err(StoreError::SlugTaken(new.slug.clone()));
        }
        other => other?,
    };
    // Its labels, budget and fleet in the same transaction: nobody sees the task without them,
    // and a start that dies leaves either all of it or nothing.
    super::evidence::insert_task_extras(sql, task_id, new)?;
    // The start under way is over once its task is recorded.
    sql.execute(
        "DELETE FROM starts_pending WHERE slug = ?1",
        &bind![&new.slug],
    )?;
    let created = JournalEvent::TaskCreated {
        agent: new.agent.clone(),
        model: new.model.clone(),
        worktree: new.worktree.clone(),
    };
    journal::append(sql, task_id, None, Some(&new.owner), &created)?;
    Ok(task_id)
}
