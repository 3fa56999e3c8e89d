//! Claude Code (`claude -p --output-format stream-json --verbose`; measured with 2.1.197 and
//! 2.1.332, pinned at the adapter's `tested_version`): its command line and its version. Its
//! stream is read by the shared [`crate::stream_json`] reader in the
//! [`crate::stream_json::Dialect::Claude`] dialect.
//!
//! - [`command`]: the command for one round, and how to point it at a scripted server.
//! - [`parse_version`]: reading `claude --version` (also used for Qwen Code's).
//! - [`FACTS`]: its name, program, package, tested version and configuration variables.
//! - [`warm`]: the long-lived process of a task kept warm, and its control protocol.
//! - `fork`: the point of a session a rewind goes back to, read from a round's stream.
//! - `mcp_registration`: `ganger mcp` in `.mcp.json` and `.claude/settings.json`, for
//!   `ganger init --supervisor claude`.

mod adapter;
pub mod command;
mod fork;
mod mcp_registration;
mod version;
pub mod warm;

pub use adapter::{Claude, FACTS};
pub use version::parse_version;

use crate::stream_json::{Dialect, StreamJsonParser};

/// A fresh reader for one Claude Code round's stream.
pub fn stream_parser() -> StreamJsonParser {
    StreamJsonParser::new(Dialect::Claude)
}
