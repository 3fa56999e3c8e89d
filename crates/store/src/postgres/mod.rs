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

mod client;
mod compact;
mod conn;
mod errors;
mod fence;
mod follow;
mod lease;
mod listen;
mod liveness;
mod migrate;
mod params;
mod password;
mod pool;
mod sql;
mod streams;
mod tls;
mod url;

pub use password::{
    Handoff, accept_env_password, accept_handed, found_passwords, handoff, strip_password,
};
pub use url::{check as check_url, redact, secrets as url_secrets};

use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::records::{Round, Task};
use crate::sql::{Database, Fence, Param, ROUND_COLUMNS, Sql, bind, round_row, with_tasks};
use crate::streams::RoundStream;
use conn::{Conn, Query, Tx};
use fence::still_held;
use pool::{Pool, Pooled};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The advisory lock every write transaction takes first ("ganger" in ASCII, then 2).
const WRITE_LOCK: i64 = 0x6761_6e67_6572_0002;

/// The stack of the backend's own threads (the listener, the heartbeats, the watchers), each of
/// which may open a connection: a TLS handshake needs more than the 256 KiB they had (a debug
/// build's worker aborted on a stack overflow reconnecting after a server restart). Only
/// what is touched is memory.
const THREAD_STACK: usize = 2 * 1024 * 1024;

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
        PgStore::open_with(url, None)
    }

    /// [`PgStore::open`], the password read from `password_file` (the configuration's
    /// `[store] password_file`) when the connection string holds none and no parent ganger
    /// handed one ([`password`] says where else it is looked for).
    pub fn open_with(url: &str, password_file: Option<&Path>) -> Result<PgStore, StoreError> {
        let pool = Pool::new(url, password_file)?;
        if !pool.schema_seen_within(SCHEMA_LOOKED_AT) {
            migrate::migrate(&mut *pool.get()?)?;
            pool.saw_schema();
        }
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

/// How long a process that found the schema current opens stores without asking again.
const SCHEMA_LOOKED_AT: Duration = Duration::from_secs(10);

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

/// A u64 as PostgreSQL's BIGINT (saturating).
pub(crate) fn big(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Database for PgStore {
    fn on_conn<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        work(&mut *self.conn()?)
    }

    fn again_if_cut<T>(
        &self,
        mut work: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.pool.twice_if_cut(|conn, _| work(conn))
    }

    fn on_checked_conn<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn()?;
        conn.ensure_open()?;
        work(&mut *conn)
    }

    /// The advisory lock, taken first thing in the transaction.
    fn write<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let done = work(&mut tx)?;
        tx.commit()?;
        Ok(done)
    }

    /// None of the leases this store holds that names `claim` was lost (`fence.rs`).
    fn fence(&self, claim: &str, first: usize) -> Fence {
        let (names, fences) = self.pool.fences.arrays();
        let (names_at, fences_at) = (format!("?{first}"), format!("?{}", first + 1));
        Fence {
            condition: format!(" AND {}", still_held(claim, &names_at, &fences_at)),
            params: vec![Param::Texts(names), Param::Ints(fences)],
        }
    }

    fn refuse_lost(&self, sql: &mut dyn Sql, claim: &ClaimKey) -> Result<(), StoreError> {
        let (names, fences) = self.pool.fences.arrays();
        let held: bool = sql.value(
            &format!("SELECT {}", still_held("?1", "?2", "?3")),
            &[
                Param::from(claim.as_str()),
                Param::Texts(names),
                Param::Ints(fences),
            ],
        )?;
        if held {
            Ok(())
        } else {
            Err(StoreError::ClaimLost {
                name: claim.as_str().to_owned(),
            })
        }
    }

    /// Heard by the schedulers when the transaction commits (several in one are one).
    fn wake_schedulers(&self, sql: &mut dyn Sql) -> Result<(), StoreError> {
        sql.execute("SELECT pg_notify(?1, ?1)", &bind![listen::QUEUE_CHANGE])?;
        Ok(())
    }

    /// The server's current snapshot (`xmin:xmax:running`), hashed: it changes whenever any
    /// transaction that wrote commits (and sometimes when nothing here changed, which only
    /// costs a poll a needless read).
    fn committed_version(&self) -> Result<i64, StoreError> {
        use std::hash::{Hash, Hasher};
        let snapshot: String =
            self.on_conn(|sql| sql.value("SELECT pg_current_snapshot()::text", &[]))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        snapshot.hash(&mut hasher);
        Ok(hasher.finish() as i64)
    }
}

impl crate::backend::Backend for PgStore {
    /// One query: the running rounds whose lease is gone or has run out.
    fn dead_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError> {
        self.on_conn(|sql| {
            let rounds = sql.rows(
                &format!(
                    "SELECT {ROUND_COLUMNS} FROM rounds r WHERE status = 'running' \
                     AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.name = r.lock_path \
                         AND l.expires_at > now()) \
                     ORDER BY id"
                ),
                &[],
                round_row,
            )?;
            with_tasks(sql, rounds)
        })
    }

    /// One thread on the pool's listening connection, woken by [`listen::QUEUE_CHANGE`].
    fn when_queue_changes(&self, then: Box<dyn Fn() -> bool + Send>) -> Result<bool, StoreError> {
        let subscription = self
            .pool
            .hub()?
            .subscribe(vec![listen::QUEUE_CHANGE.to_owned()]);
        std::thread::Builder::new()
            .name("queue-watch".into())
            .stack_size(THREAD_STACK)
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
