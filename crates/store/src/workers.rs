//! Workers: `ganger worker` processes that take queued rounds from a shared store, each
//! recorded under its name with what it offers (capacity, agents and their versions,
//! sandboxes), the claim its liveness is (a lease on PostgreSQL), and when it was last seen
//! with how many rounds it ran then. `ganger workers` lists them.

use crate::error::StoreError;
use crate::liveness::ClaimKey;
use serde::{Deserialize, Serialize};

/// An agent a worker can run, with its version as the worker found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerAgent {
    pub name: String,
    pub version: Option<String>,
}

/// A worker as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerRecord {
    pub name: String,
    /// The machine it runs on (its host name).
    pub host: String,
    pub pid: u32,
    /// How many rounds it runs at once, at most.
    pub capacity: u32,
    pub agents: Vec<WorkerAgent>,
    /// The sandbox kinds it runs rounds in.
    pub sandboxes: Vec<ganger_events::SandboxKind>,
    /// The claim it holds while it lives.
    pub claim: ClaimKey,
    pub started_at: i64,
    /// When it last said it was alive (Unix ms).
    pub seen_at: i64,
    /// The rounds it ran then.
    pub load: u32,
}

/// What a backend keeps of workers.
pub trait WorkerStore {
    /// Records a worker as it starts, replacing a record of its name: the caller holds the
    /// worker's claim, so an earlier holder of the name is dead.
    fn register_worker(&mut self, worker: &WorkerRecord) -> Result<(), StoreError>;

    /// Records that worker `name` is alive now and runs `load` rounds.
    fn worker_seen(&mut self, name: &str, load: u32) -> Result<(), StoreError>;

    /// Every worker recorded, by name.
    fn workers(&self) -> Result<Vec<WorkerRecord>, StoreError>;

    /// Forgets worker `name` (it stopped).
    fn remove_worker(&mut self, name: &str) -> Result<(), StoreError>;
}
