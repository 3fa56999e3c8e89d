//! ganger's state. The [`Store`] trait is what the engine asks of any backend: tasks, their
//! rounds and a journal, every change one transaction, "at most one running round per task"
//! enforced by the store itself. SQLite (WAL) is the backend for one machine; a PostgreSQL
//! backend for many machines will implement the same trait and pass the same tests.
//!
//! The per-round files (the prompt as sent, the raw stream, stderr, the full answer) live
//! beside the database; [`StateDir`] says where.

mod backend;
mod claims;
mod error;
mod evidence;
mod follow;
mod layout;
mod liveness;
mod ownership;
mod pipeline;
mod queue;
mod records;
mod sqlite;
mod store;
mod streams;

pub use backend::Backend;
pub use claims::{ClaimStore, CleanClaim, PendingStart};
pub use error::{BackendError, StoreError};
pub use evidence::{Budget, EvidenceStore, LabelledTask, Spent};
pub use layout::StateDir;
pub use liveness::{Claim, ClaimHold, ClaimKey, Handover, Liveness};
pub use ownership::{OwnerChange, OwnershipStore};
pub use pipeline::{PipelineRecord, PipelineStore, ReviewerVerdict, RoleLink};
pub use queue::{
    FleetItem, FleetRecord, FleetSubmission, ModelPause, NewQueued, QueueItem, QueueKind,
    QueueState, QueueStore, SlugHolder,
};
pub use records::{
    CheckResult, CheckRun, ForkPoint, JournalEntry, NewRound, NewTask, ProcessRef, Rewind, Round,
    RoundEnd, RoundKind, Task, TaskSummary, TaskUpdate, now_ms,
};
pub use sqlite::SqliteStore;
pub use store::Store;
pub use streams::{RoundStream, StreamKind, Streams};
