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
    include_str!("../../migrations/0011_queue_unique.sql"),
    include_str!("../../migrations/0012_claims.sql"),
    include_str!("../../migrations/0013_task_warm.sql"),
    include_str!("../../migrations/0014_workers.sql"),
    include_str!("../../migrations/0015_queue_prompt_fleet_remote.sql"),
    include_str!("../../migrations/0016_sessions.sql"),
    include_str!("../../migrations/0017_races.sql"),
    include_str!("../../migrations/0018_land.sql"),
    include_str!("../../migrations/0019_task_allow.sql"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_0011_settles_the_duplicates_a_race_left_and_then_refuses_them() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..10] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 10).unwrap();
        // id, slug, kind, fleet, state: what racing `start --queue`s and `fleet run`s left.
        let rows: [(i64, &str, &str, Option<&str>, &str); 12] = [
            (1, "q", "start", None, "queued"),
            (2, "q", "start", None, "queued"),
            (3, "q", "start", None, "queued"),
            (4, "x", "start", Some("f"), "ended"),
            (5, "x", "start", Some("f"), "delivered"),
            (6, "x", "start", Some("f"), "queued"),
            (7, "y", "fix", Some("f"), "queued"),
            (8, "y", "fix", Some("f"), "delivered"),
            (9, "y", "fix", None, "queued"),
            (10, "z", "fix", Some("f"), "delivering"),
            (11, "z", "fix", Some("f"), "delivered"),
            (12, "w", "fix", None, "queued"),
        ];
        for (id, slug, kind, fleet, state) in rows {
            conn.execute(
                "INSERT INTO queue (id, slug, kind, prompt_file, commander, fleet, state, \
                 created_at, updated_at) VALUES (?1, ?2, ?3, 'p', 'c', ?4, ?5, 0, 0)",
                rusqlite::params![id, slug, kind, fleet, state],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let mut statement = conn
            .prepare("SELECT id, state, reason FROM queue ORDER BY id")
            .unwrap();
        let left: Vec<(i64, String, Option<String>)> = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let duplicate = Some("a duplicate of queue item 11, closed by migration 0011".to_owned());
        assert_eq!(
            left,
            vec![
                (1, "queued".into(), None),
                (4, "ended".into(), None),
                (5, "delivered".into(), None),
                (8, "delivered".into(), None),
                (9, "queued".into(), None),
                (10, "ended".into(), duplicate),
                (11, "delivered".into(), None),
                (12, "queued".into(), None),
            ]
        );
        let again = conn.execute(
            "INSERT INTO queue (slug, kind, prompt_file, commander, state, created_at, \
             updated_at) VALUES ('q', 'start', 'p', 'c', 'queued', 0, 0)",
            [],
        );
        assert!(again.is_err(), "{again:?}");
    }
}
