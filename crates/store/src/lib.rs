//! ganger's state. The [`Backend`] trait is what the engine asks of any backend, as one
//! trait object: tasks, their rounds and a journal of [`JournalEvent`]s ([`Store`]), the queue, ownership,
//! pipelines, evidence, work under way, whether the process doing a piece of work lives
//! ([`Liveness`]) and rounds' output ([`Streams`]). Every change is one transaction, and the
//! invariants ("at most one running round per task") are the store's own. SQLite (WAL) is the
//! backend for one machine; a PostgreSQL backend for many machines will implement the same
//! traits and pass the same conformance suite (`tests/conformance/`); [`PgStore`] is its
//! first cut (`docs/postgres.md`).
//!
//! Both backends share one SQL layer (`sql/`): every statement, column list and row decoder
//! is written once, and each backend says only how it runs them.
//!
//! The files beside the database (SQLite's streams and claims, the prompt as sent, the full
//! answer) live where [`StateDir`] says.

mod backend;
mod claims;
mod conflicts;
mod error;
mod evidence;
mod faults;
mod follow;
mod journal;
mod land;
mod layout;
mod liveness;
mod ownership;
mod pipeline;
mod postgres;
mod queue;
mod race;
mod records;
mod sql;
mod sqlite;
mod store;
mod streams;
mod tallies;
mod workers;

pub use backend::Backend;
pub use claims::{ClaimStore, CleanClaim, PendingStart};
pub use conflicts::{ConflictFile, ConflictStore, OpenSnapshot, PredictedConflict};
pub use error::{BackendError, StoreError};
pub use evidence::{Budget, EvidenceStore, LabelledTask, Spent};
pub use journal::{
    FailedCheck, JournalEntry, JournalEvent, OverlappingTask, OwnerMove, Undelivered,
};
pub use land::{LandBatch, LandItem, LandStore, NewLandItem};
pub use layout::StateDir;
pub use liveness::{Claim, ClaimHold, ClaimKey, HandedClaim, Handover, Liveness};
pub use ownership::{OwnerChange, OwnershipStore};
pub use pipeline::{PipelineRecord, PipelineStore, ReviewerVerdict, RoleLink};
pub use postgres::{
    Handoff as PgHandoff, PgStore, accept_env_password, accept_handed as accept_handed_password,
    check_url, found_passwords as found_store_passwords, handoff as pg_handoff,
    redact as redact_url, strip_password, url_secrets,
};
pub use queue::{
    FleetItem, FleetRecord, FleetSubmission, ModelPause, NewQueued, QueueItem, QueueKind,
    QueueState, QueueStore, SlugHolder,
};
pub use race::{NewRace, RaceEnd, RaceRecord, RaceStore, RaceVerdict};
pub use records::{
    CheckResult, CheckRun, ForkPoint, Move, NewRound, NewTask, ProcessRef, Rewind, Round, RoundEnd,
    RoundKind, Task, TaskSummary, TaskUpdate, now_ms,
};
pub use sqlite::SqliteStore;
pub use store::Store;
pub use streams::{KeptSession, RoundStream, StreamKind, Streams};
pub use tallies::{RoundTally, TallyStore};
pub use workers::{WorkerAgent, WorkerRecord, WorkerStore};
