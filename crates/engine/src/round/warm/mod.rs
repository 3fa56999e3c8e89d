//! Warm agents: a task's agent kept alive between rounds by a warm host (`ganger warm-host`,
//! hidden, one per task, detached like a round host), spoken to over the Agent Client
//! Protocol or a CLI's own protocol (a stream-json control protocol, an app server's
//! JSON-RPC: `dialect` holds what differs),
//! so that a round is one prompt into the live session instead of a CLI start.
//!
//! The round host stays what it is for a cold round (it holds the round's claim, writes its
//! stream, runs its checks, takes its snapshots, enforces its limits and budgets and records
//! its end); only the agent is elsewhere: the round host connects to the task's warm host over
//! a Unix socket, sends the prompt and the round's permission policy, and reads the turn's
//! messages back as the round's stream (the adapter's warm reader reads them). The warm
//! host owns the agent process (started in the task's sandbox as a cold round's agent is,
//! with a parent-death signal, so that it dies with its host), answers the agent's permission
//! requests from the policy ([`policy`]), loads the round's session when it is not the live
//! one (a cold round in between, a rewind), and stops when idle for `[warm] idle`, when its
//! agent dies, or when told (`ganger warm stop`). Its liveness is a claim in the store. While
//! `ganger serve` runs, it starts the warm hosts and owns them ([`keeper`]): they end with it.

mod agent;
mod dialect;
pub mod host;
pub(crate) mod identity;
pub(crate) mod keeper;
pub(crate) mod paths;
pub(crate) mod policy;
pub(crate) mod registry;
pub(crate) mod stop;
pub(crate) mod turn;

pub use crate::base::config::PermissionRules;
pub use keeper::{Keeper, start_keeper, start_keeper_unless_kept};
pub use policy::{Decision, Policy};
pub use registry::{WarmAgentInfo, list_warm, stop_warm};
