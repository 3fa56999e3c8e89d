//! The vocabulary every other crate speaks: the normalized events an agent adapter produces
//! from its CLI's stream, the status a round ends in, the summary folded from the events, and
//! the settings a task runs with (its permission, sandbox and network).
//!
//! This crate is plain data with serde derives and no I/O, so that adapters, the store, the
//! engine and front ends agree on one model and depend on nothing heavier to do so.

mod event;
mod status;
mod summary;
mod vocabulary;

pub use event::{Event, ToolStatus, Usage, UsageMode};
pub use status::{RoundStatus, UnknownStatus};
pub use summary::{DONE_LIMIT, GatewayTally, KEPT_MESSAGES, RoundSummary, Tokens, done_line};
pub use vocabulary::{Network, Permission, SandboxKind};
