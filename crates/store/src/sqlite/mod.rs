//! The SQLite backend: one database file in WAL mode (readers never block the round host's
//! writes), a busy timeout instead of errors under contention, and `BEGIN IMMEDIATE` for every
//! change so that a check and the write that depends on it cannot be split by another process.

mod conn;
mod errors;
mod flock;
mod liveness;
mod migrate;
mod streams;

use crate::error::StoreError;
use crate::layout::StateDir;
use crate::sql::{Database, Sql};
use conn::Lite;
use errors::is_busy;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// State in one SQLite database.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    /// The directory the database is in: claims' lock files and streams' files live there.
    state: StateDir,
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
}

impl Database for SqliteStore {
    fn on_conn<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        work(&mut Lite(&self.conn))
    }

    fn again_if_cut<T>(
        &self,
        mut work: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        work(&mut Lite(&self.conn))
    }

    fn on_checked_conn<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        work(&mut Lite(&self.conn))
    }

    /// `BEGIN IMMEDIATE`: the write lock is taken before the first read.
    fn write<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let done = work(&mut Lite(&tx))?;
        tx.commit()?;
        Ok(done)
    }

    /// SQLite's `data_version`.
    fn committed_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "data_version", |row| row.get(0))?)
    }
}

impl crate::backend::Backend for SqliteStore {}
