//! The SQLite backend: one database file in WAL mode (readers never block the round host's
//! writes), a busy timeout instead of errors under contention, and `BEGIN IMMEDIATE` for every
//! change so that a check and the write that depends on it cannot be split by another process.

mod claims;
mod errors;
mod evidence;
mod fleet_submit;
mod flock;
mod liveness;
mod migrate;
mod ownership;
mod pipeline;
mod queue;
mod rows;
mod streams;
mod workers;

use crate::error::StoreError;
use crate::layout::StateDir;
use crate::records::{
    JournalEntry, Move, NewRound, NewTask, ProcessRef, Rewind, Round, RoundEnd, Task, TaskSummary,
    TaskUpdate, now_ms,
};
use crate::store::Store;
use errors::{is_busy, is_unique_violation};
use ganger_events::{RoundStatus, RoundSummary};
use rows::{ROUND_COLUMNS, TASK_COLUMNS};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use std::path::Path;
use std::time::Duration;

/// State in one SQLite database.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    /// The directory the database is in: claims' lock files and streams' files live there.
    state: StateDir,
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(crate) fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Switches a new database to WAL. Two commands that open a new database at once both try,
/// and SQLite answers the loser "database is locked" at once, without its busy handler: so
/// try again for a while, and stop as soon as the winner's switch is seen.
fn set_wal(conn: &Connection) -> Result<(), StoreError> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match conn.pragma_update(None, "journal_mode", "wal") {
            Ok(()) => return Ok(()),
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                let mode: Option<String> = conn
                    .pragma_query_value(None, "journal_mode", |row| row.get(0))
                    .ok();
                if mode.as_deref() == Some("wal") {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date;
    /// claims and streams live in the directory it is in (`StateDir`'s layout).
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        // WAL is a property of the database file: set once, when the database is new.
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if version == 0 {
            set_wal(&conn)?;
        }
        conn.pragma_update(None, "synchronous", "normal")?;
        conn.pragma_update(None, "foreign_keys", "on")?;
        // Every ganger command is a short-lived process. Checkpointing on close costs a writing
        // command four fsyncs (and the next one a new WAL file with a directory fsync); not
        // checkpointing makes every open rebuild the WAL index by reading the WAL, which grows.
        // So: no checkpoint on close, and a small automatic checkpoint (64 pages, 256 KiB), so
        // that an open reads at most that much and a checkpoint comes every few rounds.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        conn.pragma_update(None, "wal_autocheckpoint", 64)?;
        conn.pragma_update(None, "journal_size_limit", 4 * 1024 * 1024)?;
        migrate::migrate(&mut conn)?;
        let state = StateDir::at(path.parent().unwrap_or(Path::new(".")));
        Ok(SqliteStore { conn, state })
    }

    /// The schema version this build writes.
    pub fn schema_version() -> i64 {
        migrate::SCHEMA
    }

    fn write(&mut self) -> Result<Transaction<'_>, StoreError> {
        Ok(self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?)
    }
}

pub(crate) fn journal(
    tx: &Transaction<'_>,
    task_id: i64,
    round: Option<u32>,
    kind: &str,
    commander: Option<&str>,
    detail: serde_json::Value,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO journal (at, task_id, round, kind, commander, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![now_ms(), task_id, round, kind, commander, detail.to_string()],
    )?;
    Ok(())
}

pub(crate) fn running_round(
    tx: &Transaction<'_>,
    task_id: i64,
) -> Result<Option<(u32, Option<i32>)>, StoreError> {
    Ok(tx
        .query_row(
            "SELECT number, host_pid FROM rounds WHERE task_id = ?1 AND status = 'running'",
            [task_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?)
}

pub(crate) fn insert_round(
    tx: &Transaction<'_>,
    task_id: i64,
    slug: &str,
    round: &NewRound,
) -> Result<i64, StoreError> {
    if let Some((number, host_pid)) = running_round(tx, task_id)? {
        return Err(StoreError::Busy {
            slug: slug.to_owned(),
            number,
            host_pid,
        });
    }
    let number: u32 = tx.query_row(
        "SELECT COALESCE(MAX(number), 0) + 1 FROM rounds WHERE task_id = ?1",
        [task_id],
        |row| row.get(0),
    )?;
    let inserted = tx.execute(
        "INSERT INTO rounds (task_id, number, kind, status, model, session_before, commander, token, \
         lock_path, host_pid, host_start, started_at, snapshot_before, checks) \
         VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            task_id,
            number,
            round.kind.as_str(),
            round.model,
            round.session_before,
            round.commander,
            round.token,
            round.claim.as_str(),
            round.host.map(|h| h.pid),
            round.host.map(|h| h.start_ticks as i64),
            now_ms(),
            round.snapshot_before,
            to_json(&round.checks)?,
        ],
    );
    match inserted {
        Ok(_) => {}
        // A concurrent writer the busy check could not see still hits the unique index.
        Err(e) if is_unique_violation(&e) => {
            return Err(StoreError::Busy {
                slug: slug.to_owned(),
                number: number.saturating_sub(1),
                host_pid: None,
            });
        }
        Err(e) => return Err(e.into()),
    }
    let id = tx.last_insert_rowid();
    // A fork point a rewind left is this round's to use.
    tx.execute(
        "UPDATE rounds SET fork_from = (SELECT fork_from FROM tasks WHERE id = ?2) WHERE id = ?1",
        params![id, task_id],
    )?;
    tx.execute(
        "UPDATE tasks SET rounds = ?2, last_status = 'running', resume_note = NULL, \
         fork_from = NULL WHERE id = ?1",
        params![task_id, number],
    )?;
    journal(
        tx,
        task_id,
        Some(number),
        "round-started",
        Some(&round.commander),
        serde_json::json!({ "kind": round.kind.as_str(), "model": round.model }),
    )?;
    Ok(id)
}

pub(crate) fn load_round(conn: &Connection, id: i64) -> Result<Round, StoreError> {
    Ok(conn.query_row(
        &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE id = ?1"),
        [id],
        rows::round,
    )?)
}

pub(crate) fn load_task(conn: &Connection, id: i64) -> Result<Task, StoreError> {
    Ok(conn.query_row(
        &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
        [id],
        rows::task,
    )?)
}

/// Inserts a task (no round) with its journal entry; `SlugTaken` when the slug is used.
pub(crate) fn insert_task(tx: &Transaction<'_>, task: &NewTask) -> Result<i64, StoreError> {
    let inserted = tx.execute(
        "INSERT INTO tasks (slug, agent, model, base, base_commit, branch, worktree, worktree_made, \
         owner, keys, timeout_ms, stall_ms, created_at, permission, sandbox, network, rw, warm) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        params![
            task.slug,
            task.agent,
            task.model,
            task.base,
            task.base_commit,
            task.branch,
            path_text(&task.worktree),
            task.worktree_made,
            task.owner,
            to_json(&task.keys)?,
            task.timeout_ms.map(|v| v as i64),
            task.stall_ms.map(|v| v as i64),
            now_ms(),
            task.permission,
            task.sandbox,
            task.network,
            to_json(&task.rw)?,
            task.warm,
        ],
    );
    match inserted {
        Ok(_) => {}
        Err(e) if is_unique_violation(&e) => {
            return Err(StoreError::SlugTaken(task.slug.clone()));
        }
        Err(e) => return Err(e.into()),
    }
    let task_id = tx.last_insert_rowid();
    // Its labels, budget and fleet in the same transaction: nobody sees the task without them,
    // and a start that dies leaves either all of it or nothing.
    evidence::insert_task_extras(tx, task_id, task)?;
    // The start under way is over once its task is recorded.
    tx.execute("DELETE FROM starts_pending WHERE slug = ?1", [&task.slug])?;
    journal(
        tx,
        task_id,
        None,
        "task-created",
        Some(&task.owner),
        serde_json::json!({ "agent": task.agent, "model": task.model, "worktree": task.worktree }),
    )?;
    Ok(task_id)
}

impl Store for SqliteStore {
    fn create_task(
        &mut self,
        task: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError> {
        let tx = self.write()?;
        let task_id = insert_task(&tx, task)?;
        let round_id = insert_round(&tx, task_id, &task.slug, round)?;
        let stored_task = load_task(&tx, task_id)?;
        let stored_round = load_round(&tx, round_id)?;
        tx.commit()?;
        crate::faults::answer_lost("create_task")?;
        Ok((stored_task, stored_round))
    }

    fn begin_round(
        &mut self,
        task_id: i64,
        round: &NewRound,
        update: &TaskUpdate,
    ) -> Result<Round, StoreError> {
        let tx = self.write()?;
        let task = load_task(&tx, task_id)?;
        if let Some(sent) = round.generation {
            if sent != task.generation {
                return Err(StoreError::Stale {
                    slug: task.slug,
                    sent,
                    now: task.generation,
                    owner: task.owner,
                });
            }
            if !task.admits(&round.commander) {
                return Err(StoreError::NotAllowed {
                    slug: task.slug,
                    commander: round.commander.clone(),
                    owner: task.owner,
                });
            }
        }
        claims::refuse_cleaning(&tx, task_id, &task.slug)?;
        let round_id = insert_round(&tx, task_id, &task.slug, round)?;
        if let Some(model) = &update.model {
            tx.execute(
                "UPDATE tasks SET model = ?2 WHERE id = ?1",
                params![task_id, model],
            )?;
        }
        if update.new_session {
            tx.execute("UPDATE tasks SET session = NULL WHERE id = ?1", [task_id])?;
        }
        if !update.keys.is_empty() {
            let mut keys = task.keys.clone();
            keys.extend(update.keys.clone());
            tx.execute(
                "UPDATE tasks SET keys = ?2 WHERE id = ?1",
                params![task_id, to_json(&keys)?],
            )?;
        }
        let stored = load_round(&tx, round_id)?;
        tx.commit()?;
        crate::faults::answer_lost("begin_round")?;
        Ok(stored)
    }

    fn record_host(&mut self, round_id: i64, host: ProcessRef) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE rounds SET host_pid = ?2, host_start = ?3 WHERE id = ?1",
            params![round_id, host.pid, host.start_ticks as i64],
        )?;
        Ok(())
    }

    fn record_agent(
        &mut self,
        round_id: i64,
        agent: ProcessRef,
        cgroup: Option<&Path>,
        session: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE rounds SET agent_pid = ?2, agent_start = ?3, cgroup = ?4, \
             session = COALESCE(?5, session) WHERE id = ?1",
            params![
                round_id,
                agent.pid,
                agent.start_ticks as i64,
                cgroup.map(path_text),
                session
            ],
        )?;
        Ok(())
    }

    fn record_progress(
        &mut self,
        round_id: i64,
        summary: &RoundSummary,
        progress_at: i64,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE rounds SET summary = ?2, progress_at = ?3 WHERE id = ?1 AND status = 'running'",
            params![round_id, to_json(summary)?, progress_at],
        )?;
        Ok(())
    }

    fn finish_round(&mut self, round_id: i64, end: &RoundEnd) -> Result<bool, StoreError> {
        debug_assert!(end.status != RoundStatus::Running);
        let tx = self.write()?;
        let changed = tx.execute(
            "UPDATE rounds SET status = ?2, reason = ?3, session = ?4, exit_code = ?5, exit_signal = ?6, \
             summary = ?7, snapshot_after = ?8, changed = ?9, ended_at = ?10, worktree_changes = ?11, \
             snapshot_before = COALESCE(?12, snapshot_before), \
             checks = CASE WHEN ?13 = '[]' THEN checks ELSE ?13 END \
             WHERE id = ?1 AND status = 'running'",
            params![
                round_id,
                end.status.as_str(),
                end.reason,
                end.session,
                end.exit_code,
                end.exit_signal,
                to_json(&end.summary)?,
                end.snapshot_after,
                to_json(&end.changed)?,
                now_ms(),
                to_json(&end.worktree_changes)?,
                end.snapshot_before,
                to_json(&end.checks)?,
            ],
        )?;
        if changed == 0 {
            return Ok(false);
        }
        let (task_id, number, commander): (i64, u32, String) = tx.query_row(
            "SELECT task_id, number, commander FROM rounds WHERE id = ?1",
            [round_id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )?;
        tx.execute(
            "UPDATE tasks SET last_status = ?2, cost_usd = cost_usd + ?3, \
             session = COALESCE(session, ?4) WHERE id = ?1",
            params![
                task_id,
                end.status.as_str(),
                end.summary.cost_usd.unwrap_or(0.0),
                end.session,
            ],
        )?;
        journal(
            &tx,
            task_id,
            Some(number),
            "round-finished",
            Some(&commander),
            serde_json::json!({
                "status": end.status.as_str(),
                "reason": end.reason,
                "done": end.summary.done,
            }),
        )?;
        tx.commit()?;
        Ok(true)
    }

    fn mark_cleaned(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        let tx = self.write()?;
        tx.execute(
            "UPDATE tasks SET cleaned_at = ?2 WHERE id = ?1",
            params![task_id, now_ms()],
        )?;
        tx.execute("DELETE FROM task_cleaning WHERE task_id = ?1", [task_id])?;
        journal(&tx, task_id, None, "cleaned", Some(commander), detail)?;
        tx.commit()?;
        Ok(())
    }

    fn move_worktree(&mut self, task_id: i64, moved: &Move) -> Result<(), StoreError> {
        let tx = self.write()?;
        tx.execute(
            "UPDATE tasks SET worktree = ?2, worktree_made = 1 WHERE id = ?1",
            params![task_id, path_text(&moved.worktree)],
        )?;
        if let Some(note) = &moved.resume_note {
            tx.execute(
                "UPDATE tasks SET session = NULL, fork_from = NULL, resume_note = ?2 \
                 WHERE id = ?1",
                params![task_id, note],
            )?;
        }
        journal(
            &tx,
            task_id,
            None,
            "moved",
            Some(&moved.commander),
            moved.detail.clone(),
        )?;
        tx.commit()?;
        Ok(())
    }

    fn rewind(&mut self, task_id: i64, to: u32, rewind: &Rewind) -> Result<Vec<u32>, StoreError> {
        let tx = self.write()?;
        let task = load_task(&tx, task_id)?;
        if let Some((number, host_pid)) = running_round(&tx, task_id)? {
            return Err(StoreError::Busy {
                slug: task.slug,
                number,
                host_pid,
            });
        }
        let marked = {
            let mut statement = tx.prepare(
                "UPDATE rounds SET rewound = 1 WHERE task_id = ?1 AND number > ?2 AND rewound = 0 \
                 RETURNING number",
            )?;
            let mut numbers = statement
                .query_map(params![task_id, to], |row| row.get::<_, u32>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            numbers.sort_unstable();
            numbers
        };
        tx.execute(
            "UPDATE tasks SET session = ?2, resume_note = ?3, fork_from = ?5, \
             last_status = (SELECT status FROM rounds WHERE task_id = ?1 AND number = ?4) \
             WHERE id = ?1",
            params![
                task_id,
                rewind.session,
                rewind.resume_note,
                to,
                rewind.fork_from.as_ref().map(to_json).transpose()?
            ],
        )?;
        let mut detail = rewind.detail.clone();
        if let Some(object) = detail.as_object_mut() {
            object.insert("to".into(), to.into());
            object.insert("rewound".into(), serde_json::json!(marked));
        }
        journal(
            &tx,
            task_id,
            Some(to),
            "rewound",
            Some(&rewind.commander),
            detail,
        )?;
        tx.commit()?;
        Ok(marked)
    }

    fn record_merge(
        &mut self,
        task_id: i64,
        commander: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        let tx = self.write()?;
        journal(&tx, task_id, None, "merged", Some(commander), detail)?;
        tx.commit()?;
        Ok(())
    }

    fn request_cancel(&mut self, round_id: i64, commander: &str) -> Result<bool, StoreError> {
        let tx = self.write()?;
        let changed = tx.execute(
            "UPDATE rounds SET cancel_requested = 1 WHERE id = ?1 AND status = 'running'",
            [round_id],
        )?;
        if changed > 0 {
            let (task_id, number): (i64, u32) = tx.query_row(
                "SELECT task_id, number FROM rounds WHERE id = ?1",
                [round_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            journal(
                &tx,
                task_id,
                Some(number),
                "cancel-requested",
                Some(commander),
                serde_json::json!({}),
            )?;
        }
        tx.commit()?;
        Ok(changed > 0)
    }

    fn task(&self, slug: &str) -> Result<Option<Task>, StoreError> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE slug = ?1"),
                [slug],
                rows::task,
            )
            .optional()?)
    }

    fn task_summaries(&self) -> Result<Vec<TaskSummary>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT slug, agent, model, session, owner, worktree, rounds, last_status, cost_usd \
             FROM tasks ORDER BY slug",
        )?;
        let tasks = statement
            .query_map([], rows::task_summary)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(tasks)
    }

    fn round(&self, task_id: i64, number: Option<u32>) -> Result<Option<Round>, StoreError> {
        let found = match number {
            Some(number) => self.conn.query_row(
                &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = ?1 AND number = ?2"),
                params![task_id, number],
                rows::round,
            ),
            None => self.conn.query_row(
                &format!(
                    "SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = ?1 ORDER BY number DESC LIMIT 1"
                ),
                [task_id],
                rows::round,
            ),
        };
        Ok(found.optional()?)
    }

    fn rounds(&self, task_id: i64) -> Result<Vec<Round>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE task_id = ?1 ORDER BY number"
        ))?;
        let rounds = statement
            .query_map([task_id], rows::round)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rounds)
    }

    fn running_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {ROUND_COLUMNS} FROM rounds WHERE status = 'running' ORDER BY id"
        ))?;
        let rounds = statement
            .query_map([], rows::round)?
            .collect::<Result<Vec<_>, _>>()?;
        rounds
            .into_iter()
            .map(|round| Ok((load_task(&self.conn, round.task_id)?, round)))
            .collect()
    }

    fn journal(&self, after: i64, limit: u32) -> Result<Vec<JournalEntry>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT j.id, j.at, t.slug, j.round, j.kind, j.commander, j.detail \
             FROM journal j LEFT JOIN tasks t ON t.id = j.task_id WHERE j.id > ?1 ORDER BY j.id LIMIT ?2",
        )?;
        let entries = statement
            .query_map(params![after, limit], rows::journal_entry)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(entries)
    }
}

impl crate::backend::Backend for SqliteStore {}
