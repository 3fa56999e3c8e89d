//! Numbered migrations. Each one runs once, in its own transaction, and bumps
//! `PRAGMA user_version`; a database newer than this binary is refused rather than guessed at.

use crate::error::StoreError;
use rusqlite::Connection;

/// The migrations, in order; the schema version is the number of the last one applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_initial.sql"),
    include_str!("../../migrations/0002_task_permission.sql"),
    include_str!("../../migrations/0003_task_sandbox.sql"),
    include_str!("../../migrations/0004_task_cleaned.sql"),
    include_str!("../../migrations/0005_round_checks.sql"),
    include_str!("../../migrations/0006_round_rewound.sql"),
    include_str!("../../migrations/0007_pipeline.sql"),
    include_str!("../../migrations/0008_ownership.sql"),
    include_str!("../../migrations/0009_queue.sql"),
    include_str!("../../migrations/0010_evidence.sql"),
    include_str!("../../migrations/0012_claims.sql"),
];

/// The schema version this binary writes.
pub(crate) const SCHEMA: i64 = MIGRATIONS.len() as i64;

pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let found: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > SCHEMA {
        return Err(StoreError::TooNew {
            found,
            known: SCHEMA,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while this one waited for the write lock.
        let now: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if now > index as i64 {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}
