//! The SQLite side of [`WorkerStore`]: the `workers` table (migration 0014), one row per
//! worker name.

use super::{SqliteStore, to_json};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::records::now_ms;
use crate::workers::{WorkerRecord, WorkerStore};
use rusqlite::params;

fn corrupt(column: &str, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        format!("workers.{column}: {e}").into(),
    )
}

impl WorkerStore for SqliteStore {
    fn register_worker(&mut self, worker: &WorkerRecord) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO workers (name, host, pid, capacity, agents, sandboxes, claim, \
             started_at, seen_at, load) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                worker.name,
                worker.host,
                worker.pid,
                worker.capacity,
                to_json(&worker.agents)?,
                to_json(&worker.sandboxes)?,
                worker.claim.as_str(),
                worker.started_at,
                worker.seen_at,
                worker.load,
            ],
        )?;
        Ok(())
    }

    fn worker_seen(&mut self, name: &str, load: u32) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE workers SET seen_at = ?2, load = ?3 WHERE name = ?1",
            params![name, now_ms(), load],
        )?;
        Ok(())
    }

    fn workers(&self) -> Result<Vec<WorkerRecord>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT name, host, pid, capacity, agents, sandboxes, claim, started_at, seen_at, load \
             FROM workers ORDER BY name",
        )?;
        let rows = statement.query_map([], |row| {
            let agents: String = row.get(4)?;
            let sandboxes: String = row.get(5)?;
            let claim: String = row.get(6)?;
            Ok(WorkerRecord {
                name: row.get(0)?,
                host: row.get(1)?,
                pid: row.get(2)?,
                capacity: row.get(3)?,
                agents: serde_json::from_str(&agents).map_err(|e| corrupt("agents", e))?,
                sandboxes: serde_json::from_str(&sandboxes).map_err(|e| corrupt("sandboxes", e))?,
                claim: ClaimKey::new(claim),
                started_at: row.get(7)?,
                seen_at: row.get(8)?,
                load: row.get(9)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn remove_worker(&mut self, name: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM workers WHERE name = ?1", [name])?;
        Ok(())
    }
}
