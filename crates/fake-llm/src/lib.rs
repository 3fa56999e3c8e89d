//! A scripted model server, so that real agent CLIs can run in tests and dry runs without a
//! real model and without spending tokens.
//!
//! It speaks OpenAI chat completions (`POST /v1/chat/completions`, streamed or not), OpenAI
//! Responses (`POST /v1/responses`, as Codex CLI uses it), Anthropic Messages
//! (`POST /v1/messages`, as Claude Code uses it) and Gemini (`streamGenerateContent` and
//! `generateContent`, as Gemini CLI uses them); answers from a [`Script`] of turns (text, tool
//! calls, faults), and records every request with its headers so tests can check what an agent
//! sent. `docs/fake-llm.md` describes the script format and the matching rules.
//!
//! The crate has three layers, so that a protocol can be added without touching the
//! others:
//!
//! - `protocol`: each model API parses its request into a neutral [`Conversation`] and
//!   renders a neutral [`Answer`] (or an error body) in its own shape;
//! - `turn_picker` and `template`: the script engine, which sees only neutral forms;
//! - `server`, [`BoundServer`] and [`FakeLlm`]: HTTP, faults on the wire, recording, and the
//!   handles for the CLI (bind, then serve) and for synchronous tests (a background thread).

mod bound_server;
mod builtin_script;
mod conversation;
mod error;
mod fault;
mod handle;
mod protocol;
mod recording;
mod script;
mod script_check;
mod script_toml;
mod server;
mod template;
mod turn_picker;
mod witness;

pub use bound_server::BoundServer;
pub use builtin_script::BUILTIN_ANSWER;
pub use conversation::{Answer, Conversation, Message, Role, TokenUsage};
pub use error::{FakeLlmError, ScriptError};
pub use fault::{Fault, FaultSpec, UnknownFault};
pub use handle::FakeLlm;
pub use recording::{RecordedRequest, Reply};
pub use script::{DEFAULT_ANSWER, Script, Turn, TurnKind};
pub use template::history_line;
pub use turn_picker::AnsweredBy;
pub use witness::{DELAY_HEADER, InFlight, TASK_HEADER};
