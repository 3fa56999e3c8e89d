//! The vocabulary every other crate speaks: the normalized events an agent adapter produces
//! from its CLI's stream, the status a round ends in, and the summary folded from the events.
//!
//! This crate is plain data with serde derives and no I/O, so that adapters, the store, the
//! engine and front ends agree on one model and depend on nothing heavier to do so.

mod event;
mod status;
mod summary;

pub use event::{Event, ToolStatus, Usage, UsageMode};
pub use status::{RoundStatus, UnknownStatus};
pub use summary::{DONE_LIMIT, RoundSummary, Tokens, done_line};
