//! Codex CLI (`codex exec --json`, version 0.171.0): its command line, its wire types, the
//! normalization of its lines into ganger's events, and its success test.
//!
//! - [`parse_line`]: the full parse of one line (what `ganger log` shows).
//! - [`CodexStream`]: the [`StreamParser`] a round host feeds (Codex's lines need no memory
//!   across lines, so `feed` is the default fold of `parse_line`).
//! - [`verdict`]: whether the round is done, and if not, why.
//! - [`stderr_event`]: a call Codex's approval settings refused, which it reports only on
//!   stderr.
//! - [`app_server`]: Codex kept warm (`codex app-server`), its round's stream translated into
//!   `exec --json`'s.
//! - `mcp_registration`: `ganger mcp` in `.codex/config.toml`, for `ganger init --supervisor
//!   codex`.

mod adapter;
pub mod app_server;
pub mod command;
mod mcp_registration;
mod models;
mod normalize;
pub mod overrides;
mod rollout;
mod stderr;
mod verdict;
pub mod wire;

pub use adapter::{Codex, FACTS};
pub use models::parse_version;
pub use normalize::{PATCH_TOOL, SHELL_TOOL, http_status, parse_line};
pub use stderr::stderr_event;
pub use verdict::verdict;

use crate::{ParsedLine, StreamParser};

/// Reads a Codex `exec --json` stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexStream;

impl StreamParser for CodexStream {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        normalize::parse_line(line)
    }
}
