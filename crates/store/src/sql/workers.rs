//! [`WorkerStore`] for both backends: the `workers` table, one row per worker name.

use super::{Database, Param, bind};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::records::now_ms;
use crate::workers::{WorkerRecord, WorkerStore};

impl<D: Database> WorkerStore for D {
    fn register_worker(&mut self, worker: &WorkerRecord) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "INSERT INTO workers (name, host, pid, capacity, agents, sandboxes, claim, \
                 started_at, seen_at, load) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
                 ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, \
                 capacity = excluded.capacity, agents = excluded.agents, \
                 sandboxes = excluded.sandboxes, claim = excluded.claim, \
                 started_at = excluded.started_at, seen_at = excluded.seen_at, \
                 load = excluded.load",
                &[
                    Param::from(&worker.name),
                    Param::from(&worker.host),
                    Param::from(worker.pid),
                    Param::from(worker.capacity),
                    Param::json(&worker.agents)?,
                    Param::json(&worker.sandboxes)?,
                    Param::from(worker.claim.as_str()),
                    Param::from(worker.started_at),
                    Param::from(worker.seen_at),
                    Param::from(worker.load),
                ],
            )
        })?;
        Ok(())
    }

    fn worker_seen(&mut self, name: &str, load: u32) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "UPDATE workers SET seen_at = ?2, load = ?3 WHERE name = ?1",
                &bind![name, now_ms(), load],
            )
        })?;
        Ok(())
    }

    fn workers(&self) -> Result<Vec<WorkerRecord>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT name, host, pid, capacity, agents, sandboxes, claim, started_at, \
                 seen_at, load FROM workers ORDER BY name",
                &[],
                |row| {
                    Ok(WorkerRecord {
                        name: row.get(0)?,
                        host: row.get(1)?,
                        pid: row.get(2)?,
                        capacity: row.get(3)?,
                        agents: row.json(4, "workers.agents")?,
                        sandboxes: row.json(5, "workers.sandboxes")?,
                        claim: ClaimKey::new(row.get::<String>(6)?),
                        started_at: row.get(7)?,
                        seen_at: row.get(8)?,
                        load: row.get(9)?,
                    })
                },
            )
        })
    }

    fn remove_worker(&mut self, name: &str) -> Result<(), StoreError> {
        self.on_conn(|sql| sql.execute("DELETE FROM workers WHERE name = ?1", &bind![name]))?;
        Ok(())
    }
}
