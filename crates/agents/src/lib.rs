//! Agent adapters: for each agent CLI, how to build its command line for a new or a resumed
//! session, that CLI's own wire types, and how its stream becomes ganger's normalized events.
//! Everything ganger knows of one agent is in its folder: a constant of static facts (name,
//! program, package, tested version, environment), its part of `ganger.toml`, and what its CLI
//! can do (an interactive interface, a reasoning effort, forking a session, finding a lost
//! one) as capabilities of its [`Adapter`]; the engine asks, and never names an agent.
//!
//! Adapters are pure: they spawn nothing and touch no files. The engine asks an adapter for a
//! command, the sandbox runs it, and the adapter reads what came back. (The one writer here is
//! [`mcp_registration::install`], which writes the files an agent's MCP registration edits.)

pub mod acp;
mod adapter;
mod capabilities;
pub mod claude;
pub mod codex;
pub mod command;
mod facts;
pub mod gemini;
mod interactive;
mod json_merge;
pub mod mcp_registration;
mod model_route;
pub mod opencode;
mod outcome;
mod own_edit;
pub mod qwen;
mod registry;
pub mod scan;
mod settings;
mod stream;
pub mod stream_json;
/// Claude Code's stream-json control protocol, as the warm host speaks it
/// ([`WarmProtocol::StreamJsonControl`]).
pub use claude::warm as stream_json_control;
/// Codex's app-server protocol, as the warm host speaks it ([`WarmProtocol::AppServer`]).
pub use codex::app_server;

pub use adapter::{
    Adapter, CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint, SessionCarrier,
    SessionFinder, WarmPlan, WarmProtocol, is_session_name,
};
pub use capabilities::{
    CopiedSession, CutSession, Interactive, NamedProgram, SessionCopy, SessionFork,
};
pub use facts::{AgentFacts, ConfigFile, Package};
pub use interactive::Headless;
pub use model_route::{ModelRoute, RouteSetting, set_config};
pub use outcome::{AgentExit, Verdict};
pub use own_edit::OwnEdit;
pub use registry::{DEFAULT_AGENT, UnknownAgent, adapter, adapters, configured, named, names};
pub use settings::{AgentConfig, SETTINGS_TEMPLATE};
pub use stream::{Feed, ParsedLine, StreamParser, feed_line, summarize_reader, summarize_stream};
