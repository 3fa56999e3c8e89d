//! Where a round's agent runs, and everything about its processes: the [`Sandbox`] trait with
//! the local and bubblewrap sandboxes (Docker's is in `ganger-docker`), and starting it in its own
//! session and process group with a parent-death signal and an explicit environment, putting
//! it in a cgroup of its own where the system allows, marking every process of the round so
//! that even the agent's detached children can be found, measuring the round's activity for
//! the stall limit, and stopping it all (SIGTERM, a grace period, SIGKILL).
//!
//! This is the only crate that starts agent processes (`clippy.toml` forbids `spawn`
//! elsewhere), the detached round host included; whether a host is alive is the store's to
//! say (`ganger_store::Liveness`), and a detached host inherits whatever file the store's
//! claim hands over.

mod activity;
mod bwrap;
mod bwrap_sandbox;
mod capture;
mod cgroup;
mod confinement;
mod detach;
mod error;
mod interactive;
mod local;
mod local_sandbox;
mod members;
mod proc_stat;
mod raw_spawn;
mod relay;

pub use activity::Activity;
pub use bwrap::{BwrapSpec, bwrap_args, installation_dirs, wrap_in_bwrap};
pub use bwrap_sandbox::BwrapSandbox;
pub use capture::{Captured, run_captured};
pub use cgroup::Cgroup;
pub use confinement::{Confinement, Sandbox};
pub use detach::{
    DetachedHost, WITHHELD_ENV, spawn_detached_host, spawn_owned_host, spawn_round_host,
    unblock_stop_signals,
};
pub use error::SandboxError;
pub use ganger_events::{Network, SandboxKind};
pub use interactive::run_interactive;
pub use local::{
    AgentCommand, AgentExit, RunningAgent, Waited, spawn_local, spawn_local_conversing,
};
pub use local_sandbox::LocalSandbox;
pub use members::{
    RoundMarker, kill_round, marked_processes, marked_processes_with_prefix, round_members,
};
pub use proc_stat::{ProcStat, ProcessId, proc_stat};
pub use relay::{GatewayDoor, RELAY_JS, RELAY_SOCKET_IN_SANDBOX, run_relay};

/// The environment variable that marks every process of a round with the round's token.
pub const ROUND_ENV: &str = "GANGER_ROUND";
