//! Numbered migrations (`migrations-postgres/`), applied in order in one transaction under a
//! transaction-level advisory lock, so that two ganger processes opening a new database at
//! once cannot both apply them: the second waits, then finds the schema current. The version
//! is the one row of `schema_version`; a database newer than this build is refused with
//! [`StoreError::TooNew`], as SQLite's is.

use super::conn::{Conn, Query};
use crate::error::StoreError;

/// The migrations, in order; the schema version is the number of the last one applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations-postgres/0001_state.sql"),
    include_str!("../../migrations-postgres/0002_leases.sql"),
    include_str!("../../migrations-postgres/0003_streams.sql"),
    include_str!("../../migrations-postgres/0004_workers.sql"),
    include_str!("../../migrations-postgres/0005_queue_prompt_fleet_remote.sql"),
    include_str!("../../migrations-postgres/0006_sessions.sql"),
    include_str!("../../migrations-postgres/0007_races.sql"),
    include_str!("../../migrations-postgres/0008_land.sql"),
    include_str!("../../migrations-postgres/0009_task_allow.sql"),
    include_str!("../../migrations-postgres/0010_streams_packed.sql"),
];

/// The schema version this build writes.
pub(crate) const SCHEMA: i64 = MIGRATIONS.len() as i64;

/// The advisory lock migrations hold ("ganger" in ASCII, then 1).
const MIGRATE_LOCK: i64 = 0x6761_6e67_6572_0001;

/// Whether a database at schema `found` is current; [`StoreError::TooNew`] when it is newer.
fn current(found: i64) -> Result<bool, StoreError> {
    if found > SCHEMA {
        return Err(StoreError::TooNew {
            found,
            known: SCHEMA,
        });
    }
    Ok(found == SCHEMA)
}

pub(crate) fn migrate(conn: &mut Conn) -> Result<(), StoreError> {
    // Every ganger process opens the store, most of them on a current schema: one read
    // settles that, without the lock (a missing table is an error here, and the locked path
    // below makes it). Prepared: a worker opens a store for every round it starts.
    if let Ok(row) = conn.query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])
        && let Ok(found) = row.try_get::<_, i64>(0)
        && current(found)?
    {
        return Ok(());
    }
    let mut tx = conn.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")?;
    let found: i64 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM schema_version", &[])?
        .try_get(0)?;
    if current(found)? {
        return Ok(());
    }
    for sql in MIGRATIONS.iter().skip(usize::try_from(found).unwrap_or(0)) {
        tx.batch_execute(sql)?;
    }
    tx.execute("DELETE FROM schema_version", &[])?;
    tx.execute(
        "INSERT INTO schema_version (version) VALUES ($1)",
        &[&SCHEMA],
    )?;
    tx.commit()?;
    Ok(())
}
