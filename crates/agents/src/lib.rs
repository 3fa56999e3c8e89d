//! Agent adapters: for each agent CLI, how to build its command line for a new or a resumed
//! session, that CLI's own wire types, and how its stream becomes ganger's normalized events.
//!
//! Adapters are pure: they spawn nothing and touch no files. The engine asks an adapter for a
//! command, the sandbox runs it, and the adapter reads what came back.

mod adapter;
pub mod claude;
pub mod codex;
pub mod command;
pub mod gemini;
mod interactive;
mod json_merge;
pub mod opencode;
mod outcome;
pub mod qwen;
pub mod scan;
mod stream;
pub mod stream_json;

pub use adapter::{
    Adapter, CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint, SessionFinder,
    adapter, adapters,
};
pub use outcome::{AgentExit, Verdict};
pub use stream::{Feed, ParsedLine, StreamParser, feed_line, summarize_reader, summarize_stream};
