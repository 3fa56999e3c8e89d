//! PostgreSQL's side of [`WorkerStore`]: the `workers` table (migration 0004), one row per
//! worker name.

use super::conn::Query;
use super::rows::narrow;
use super::{PgStore, to_json};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::records::now_ms;
use crate::workers::{WorkerRecord, WorkerStore};

fn corrupt(column: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("workers.{column}: {e}"))
}

impl WorkerStore for PgStore {
    fn register_worker(&mut self, worker: &WorkerRecord) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO workers (name, host, pid, capacity, agents, sandboxes, claim, \
             started_at, seen_at, load) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (name) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, \
             capacity = EXCLUDED.capacity, agents = EXCLUDED.agents, \
             sandboxes = EXCLUDED.sandboxes, claim = EXCLUDED.claim, \
             started_at = EXCLUDED.started_at, seen_at = EXCLUDED.seen_at, load = EXCLUDED.load",
            &[
                &worker.name,
                &worker.host,
                &i64::from(worker.pid),
                &i64::from(worker.capacity),
                &to_json(&worker.agents)?,
                &to_json(&worker.sandboxes)?,
                &worker.claim.as_str(),
                &worker.started_at,
                &worker.seen_at,
                &i64::from(worker.load),
            ],
        )?;
        Ok(())
    }

    fn worker_seen(&mut self, name: &str, load: u32) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE workers SET seen_at = $2, load = $3 WHERE name = $1",
            &[&name, &now_ms(), &i64::from(load)],
        )?;
        Ok(())
    }

    fn workers(&self) -> Result<Vec<WorkerRecord>, StoreError> {
        let rows = self.conn()?.query(
            "SELECT name, host, pid, capacity, agents, sandboxes, claim, started_at, seen_at, load \
             FROM workers ORDER BY name",
            &[],
        )?;
        rows.iter()
            .map(|row| {
                let agents: String = row.try_get(4)?;
                let sandboxes: String = row.try_get(5)?;
                let claim: String = row.try_get(6)?;
                Ok(WorkerRecord {
                    name: row.try_get(0)?,
                    host: row.try_get(1)?,
                    pid: narrow(row.try_get(2)?, "pid")?,
                    capacity: narrow(row.try_get(3)?, "capacity")?,
                    agents: serde_json::from_str(&agents).map_err(|e| corrupt("agents", e))?,
                    sandboxes: serde_json::from_str(&sandboxes)
                        .map_err(|e| corrupt("sandboxes", e))?,
                    claim: ClaimKey::new(claim),
                    started_at: row.try_get(7)?,
                    seen_at: row.try_get(8)?,
                    load: narrow(row.try_get(9)?, "load")?,
                })
            })
            .collect()
    }

    fn remove_worker(&mut self, name: &str) -> Result<(), StoreError> {
        self.conn()?
            .execute("DELETE FROM workers WHERE name = $1", &[&name])?;
        Ok(())
    }
}
