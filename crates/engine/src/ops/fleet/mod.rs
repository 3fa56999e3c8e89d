//! The fleet: a queue of rounds asked for (`start --queue`, `fix --queue`, `broadcast`,
//! fleet files) and the scheduler that starts them under limits, in dependency order,
//! pausing a model after a rate limit (`ganger serve`, `ganger fleet run`). See
//! docs/fleet.md, "Scheduler and daemon".

mod backoff;
mod deliver;
mod enqueue;
mod events;
mod file;
mod lanes;
mod limits;
mod offer;
mod race_task;
mod remote;
mod run;
mod scheduler;
mod serve;
mod serve_lock;
mod spec;
mod status;
mod submit;
mod worker;

pub use enqueue::{broadcast, queue_fix, queue_start};
pub use events::{FleetEvent, FleetEvents};
pub use file::{Fleet, FleetTask, find_cycle, read_fleet};
pub use ganger_store::{ModelPause, QueueItem, QueueKind, QueueState};
pub use limits::{Limits, Running};
pub use offer::Offer;
pub use race_task::{FleetAttempt, FleetRace};
pub use run::{FleetRun, run_fleet};
pub use scheduler::{Drain, Drained, SchedulerOptions, run_scheduler, run_scheduler_as};
pub use serve::serve;
pub use serve_lock::{ServeLock, serve_holder, take_serve_lock};
pub use spec::CONTINUE;
pub use status::{FleetStatus, FleetTaskStatus, fleet_status};
pub use submit::{Submitted, submit_fleet};
pub use worker::{WorkerOptions, WorkerStatus, list_workers, run_worker};
