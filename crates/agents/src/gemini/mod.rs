//! Gemini CLI (`gemini --output-format stream-json`, version 0.61.0): its command line and
//! settings file, its wire types, the normalization of its lines into ganger's events, and its
//! success test.
//!
//! - [`GeminiStream`]: the [`StreamParser`](crate::StreamParser) a round host feeds; it
//!   remembers tool names by call id and joins the answer's pieces, so one is made per round.
//! - [`verdict`]: whether the round is done, and if not, why.
//! - `mcp_registration`: `ganger mcp` in `.gemini/settings.json`, for `ganger init
//!   --supervisor gemini`.

mod adapter;
mod chats;
pub mod command;
mod mcp_registration;
mod normalize;
pub mod settings;
mod verdict;
pub mod wire;

/// `gemini --version` prints its bare version, which Codex's reader reads too.
pub use crate::codex::parse_version;
pub use adapter::{FACTS, Gemini};
pub use normalize::{GeminiStream, SUCCESS, api_error};
pub use verdict::verdict;
