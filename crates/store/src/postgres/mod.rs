//! The PostgreSQL backend, for many machines sharing one state: the records in tables
//! (`migrations-postgres/`), claims as leases renewed by a heartbeat (`lease.rs`), rounds'
//! streams as rows of bytes, and LISTEN/NOTIFY to wake waiters and followers at once, with a
//! poll behind it in case a notification is lost.
//!
//! Every change that reads before it writes takes one transaction-level advisory lock first,
//! the PostgreSQL twin of SQLite's `BEGIN IMMEDIATE`: writers are serialized, so a check and
//! the write that depends on it (one running round per task, one open start per slug) cannot
//! be split by another process, and the unique indexes stay as the last word, as in SQLite.
//! Finer locks (per task) can come later without changing what the store promises.

mod claims;
mod client;
mod conn;
mod errors;
mod evidence;
mod fence;
mod fleet_submit;
mod follow;
mod lease;
mod listen;
mod liveness;
mod migrate;
mod ownership;
mod pipeline;
mod pool;
mod queue;
mod rows;
mod store;
mod streams;
mod url;
mod workers;

pub use url::{check as check_url, redact, secrets as url_secrets};

use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::records::{NewRound, NewTask, Round, Task, now_ms};
use crate::streams::RoundStream;
use conn::{Conn, Query, Tx};
use errors::is_unique_violation;
use pool::{Pool, Pooled};
use rows::{ROUND_COLUMNS, TASK_COLUMNS};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// The advisory lock every write transaction takes first ("ganger" in ASCII, then 2).
const WRITE_LOCK: i64 = 0x6761_6e67_6572_0002;

/// State in one PostgreSQL database.
pub struct PgStore {
    pool: Arc<Pool>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.pool.shown())
            .finish()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://USER:PASSWORD@HOST:PORT/DB`, or the
    /// key-value form) and brings its schema up to date. A failed connection is an error of
    /// kind [`StoreError::Backend`] naming the URL without its password.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        liveness::adopt_handover();
        let pool = Pool::new(url)?;
        migrate::migrate(&mut *pool.get()?)?;
        Ok(PgStore { pool })
    }

    /// The schema version this build writes.
    pub fn schema_version() -> i64 {
        migrate::SCHEMA
    }

    fn conn(&self) -> Result<Pooled, StoreError> {
        self.pool.get()
    }

    /// Runs `read` (or a write that may be sent twice) on a connection, once more on a new
    /// one when the first was gone ([`Pool::twice_if_cut`]): a round host's look at the store
    /// goes on through a restart of the server.
    fn twice<T>(
        &self,
        mut read: impl FnMut(&mut Conn) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.pool.twice_if_cut(|conn, _| read(conn))
    }
}

/// How long a write waits for the write lock before it gives up as [`StoreError::Contended`]
/// (nothing changed; trying again later can succeed), as SQLite's busy timeout does.
const WRITE_WAIT: &str = "10s";

/// Begins a write transaction on `conn`: it holds the write lock until it ends.
pub(crate) fn write(conn: &mut Pooled) -> Result<Tx<'_>, StoreError> {
    conn.ensure_open()?;
    let mut tx = conn.transaction()?;
    // One round trip: the wait's limit, then the lock (the limit holds for advisory locks too).
    tx.batch_execute(&format!(
        "SET LOCAL lock_timeout = '{WRITE_WAIT}'; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
    ))?;
    Ok(tx)
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(crate) fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A u64 as PostgreSQL's BIGINT (saturating).
pub(crate) fn big(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub(crate) fn journal(
    tx: &mut impl Query,
    task_id: i64,
    round: Option<u32>,
    kind: &str,
    commander: Option<&str>,
    detail: serde_json::Value,
) -> Result<i64, StoreError> {
    let row = tx.query_one(
        "INSERT INTO journal (at, task_id, round, kind, commander, detail) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        &[
            &now_ms(),
            &task_id,
            &round.map(i64::from),
            &kind,
            &commander,
            &detail.to_string(),
        ],
    )?;
    Ok(row.try_get(0)?)
}

pub(crate) fn running_round(
    tx: &mut impl Query,
    task_id: i64,
) -> Result<Option<(u32, Option<i32>)>, StoreError> {
    let Some(row) = tx.query_opt(
        "SELECT number, host_pid FROM rounds WHERE task_id = $1 AND status = 'running'",
        &[&task_id],
    )?
    else {
        return Ok(None);
    };
    Ok(Some((
        rows::narrow(row.try_get(0)?, "number")?,
        rows::narrow_opt(row.try_get(1)?, "host_pid")?,
    )))
}

pub(crate) fn insert_round(
    tx: &mut Tx<'_>,
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
    let number: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM rounds WHERE task_id = $1",
            &[&task_id],
        )?
        .try_get(0)?;
    let inserted = tx.query_one(
        "INSERT INTO rounds (task_id, number, kind, status, model, session_before, commander, token, \
         lock_path, host_pid, host_start, started_at, snapshot_before, checks) \
         VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
        &[
            &task_id,
            &number,
            &round.kind.as_str(),
            &round.model,
            &round.session_before,
            &round.commander,
            &round.token,
            &round.claim.as_str(),
            &round.host.map(|h| i64::from(h.pid)),
            &round.host.map(|h| big(h.start_ticks)),
            &now_ms(),
            &round.snapshot_before,
            &to_json(&round.checks)?,
        ],
    );
    let id: i64 = match inserted {
        Ok(row) => row.try_get(0)?,
        // A concurrent writer the busy check could not see still hits the unique index.
        Err(e) if is_unique_violation(&e) => {
            return Err(StoreError::Busy {
                slug: slug.to_owned(),
                number: rows::narrow::<u32>(number, "number")?.saturating_sub(1),
                host_pid: None,
            });
        }
        Err(e) => return Err(e.into()),
    };
    // A fork point a rewind left is this round's to use.
    tx.execute(
        "UPDATE rounds SET fork_from = (SELECT fork_from FROM tasks WHERE id = $2) WHERE id = $1",
        &[&id, &task_id],
    )?;
    tx.execute(
        "UPDATE tasks SET rounds = $2, last_status = 'running', resume_note = NULL, \
         fork_from = NULL WHERE id = $1",
        &[&task_id, &number],
    )?;
    journal(
        tx,
        task_id,
        Some(rows::narrow(number, "number")?),
        "round-started",
        Some(&round.commander),
        serde_json::json!({ "kind": round.kind.as_str(), "model": round.model }),
    )?;
    Ok(id)
}

pub(crate) fn load_round(conn: &mut impl Query, id: i64) -> Result<Round, StoreError> {
    let row = conn.query_one(
        &format!("SELECT {ROUND_COLUMNS} FROM rounds WHERE id = $1"),
        &[&id],
    )?;
    rows::round(&row)
}

pub(crate) fn load_task(conn: &mut impl Query, id: i64) -> Result<Task, StoreError> {
    let row = conn.query_one(
        &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1"),
        &[&id],
    )?;
    rows::task(&row)
}

/// Inserts a task (no round) with its journal entry; `SlugTaken` when the slug is used.
pub(crate) fn insert_task(tx: &mut Tx<'_>, task: &NewTask) -> Result<i64, StoreError> {
    let inserted = tx.query_one(
        "INSERT INTO tasks (slug, agent, model, base, base_commit, branch, worktree, worktree_made, \
         owner, keys, timeout_ms, stall_ms, created_at, permission, sandbox, network, rw, warm) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
         RETURNING id",
        &[
            &task.slug,
            &task.agent,
            &task.model,
            &task.base,
            &task.base_commit,
            &task.branch,
            &path_text(&task.worktree),
            &task.worktree_made,
            &task.owner,
            &to_json(&task.keys)?,
            &task.timeout_ms.map(big),
            &task.stall_ms.map(big),
            &now_ms(),
            &task.permission,
            &task.sandbox,
            &task.network,
            &to_json(&task.rw)?,
            &task.warm,
        ],
    );
    let task_id: i64 = match inserted {
        Ok(row) => row.try_get(0)?,
        Err(e) if is_unique_violation(&e) => {
            return Err(StoreError::SlugTaken(task.slug.clone()));
        }
        Err(e) => return Err(e.into()),
    };
    // Its labels, budget and fleet in the same transaction: nobody sees the task without them,
    // and a start that dies leaves either all of it or nothing.
    evidence::insert_task_extras(tx, task_id, task)?;
    // The start under way is over once its task is recorded.
    tx.execute("DELETE FROM starts_pending WHERE slug = $1", &[&task.slug])?;
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

impl crate::backend::Backend for PgStore {
    /// One query: the running rounds whose lease is gone or has run out.
    fn dead_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError> {
        let mut conn = self.conn()?;
        let found = conn.query(
            &format!(
                "SELECT {ROUND_COLUMNS} FROM rounds r WHERE status = 'running' \
                 AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.name = r.lock_path \
                     AND l.expires_at > now()) \
                 ORDER BY id"
            ),
            &[],
        )?;
        let rounds = rows::all(found, rows::round)?;
        rounds
            .into_iter()
            .map(|round| Ok((load_task(&mut *conn, round.task_id)?, round)))
            .collect()
    }

    /// One thread on the pool's listening connection, woken by [`listen::QUEUE_CHANGE`].
    fn when_queue_changes(&self, then: Box<dyn Fn() -> bool + Send>) -> Result<bool, StoreError> {
        let subscription = self
            .pool
            .hub()?
            .subscribe(vec![listen::QUEUE_CHANGE.to_owned()]);
        std::thread::Builder::new()
            .name("queue-watch".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                loop {
                    if subscription.wait(std::time::Duration::from_secs(3600)) && !then() {
                        return;
                    }
                }
            })
            .map_err(|source| StoreError::Io {
                path: "queue-watch".into(),
                source,
            })?;
        Ok(true)
    }

    /// Wakes on appends and on the claim's end (LISTEN/NOTIFY) rather than polling.
    fn follow_stream<'a>(
        &'a self,
        stream: &RoundStream,
        claim: &ClaimKey,
        offset: u64,
    ) -> Result<Box<dyn Read + 'a>, StoreError> {
        Ok(Box::new(follow::PgFollow::new(
            &self.pool,
            stream,
            claim.as_str(),
            offset,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_is_a_backend_error_naming_the_url_without_its_password() {
        // Port 1 on this machine: nothing listens there, so the connection is refused at once.
        let error = PgStore::open("postgres://ganger:s3cret-word@127.0.0.1:1/state").unwrap_err();
        assert!(matches!(error, StoreError::Backend { .. }), "{error:?}");
        let mut chain = error.to_string();
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            chain.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        assert!(
            chain.starts_with(
                "state database error: failed to connect to postgres://ganger:***@127.0.0.1:1/state: "
            ),
            "{chain}"
        );
        assert!(!chain.contains("s3cret-word"), "{chain}");
        assert!(!format!("{error:?}").contains("s3cret-word"), "{error:?}");
    }
}
