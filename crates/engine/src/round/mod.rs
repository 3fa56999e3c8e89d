//! A round: the prompt sent to the task's session and everything that came of it. The round
//! host runs the agent, copies its stream to the round's files, keeps the summary in the store
//! while it runs, enforces the wall-clock and stall limits, stops the round when asked, and
//! finally records how it ended with a snapshot of the worktree.

mod checks;
mod evidence;
mod finish;
mod follow;
pub(crate) mod gateway;
mod host;
pub(crate) mod launch;
pub(crate) mod lost_session;
mod output;
mod own_edits;
mod push;
pub(crate) mod reaper;
mod setup;
mod signals;
pub(crate) mod task_move;
pub mod warm;
mod warm_round;
mod watchdog;

pub use finish::HostOutcome;
pub(crate) use finish::settle_dead_round;
pub use host::run_host;
pub(crate) use host::{Planned, warm_agent_command, write_plan_files};
pub(crate) use push::{session_carrier, session_file};
pub use setup::RoundInput;
pub(crate) use signals::{SignalWatch, signal_name};
