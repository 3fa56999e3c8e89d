//! Qwen Code (`qwen --output-format stream-json`; measured with 0.15.10 and 0.24.4, pinned at
//! the adapter's `tested_version`): its command line and the settings file ganger gives it.
//! Its stream is Claude-compatible stream-json, read by the shared [`crate::stream_json`]
//! reader in the [`crate::stream_json::Dialect::Qwen`] dialect: session-total usage, no cost,
//! and API errors reported as `[API Error: …]` text (exit 0 and `result` with 0.15.10; exit 1
//! and `error.message` with 0.24.4).
//!
//! - [`command`]: the command for one round, and how to point it at a scripted server.
//! - [`settings`]: the system settings file (auto-update off, auth type, `ganger.toml`'s table).

mod adapter;
pub mod command;
pub mod settings;

pub use adapter::{FACTS, Qwen};

use crate::stream_json::{Dialect, StreamJsonParser};

/// A fresh reader for one Qwen Code round's stream.
pub fn stream_parser() -> StreamJsonParser {
    StreamJsonParser::new(Dialect::Qwen)
}
