//! OpenCode (`opencode run --format json`, version 1.18.33): its wire types, the normalization
//! of its lines into ganger's events, the summary's fast path, and its success test.
//!
//! - [`parse_line`]: the full parse of one line (what `ganger log` shows).
//! - [`OpenCodeStream`]: the [`StreamParser`] a round host feeds; its `feed` takes the fast
//!   path where the scanner can read a line exactly, and always equals folding
//!   [`parse_line`].
//! - [`summarize_bytes`]: a whole finished stream, line by line through that same `feed`.
//! - [`verdict`]: whether the round is done, and if not, why.
//! - [`FACTS`]: its name, program, package, tested version and configuration variables.
//! - `fork`: copying a session up to a rewound point through `export` and `import`.
//! - `mcp_registration`: `ganger mcp` in `opencode.json`, for `ganger init --supervisor
//!   opencode`.

mod adapter;
pub mod command;
mod fast;
mod fork;
mod lenient;
mod mcp_registration;
mod models;
mod normalize;
pub mod session_export;
mod sessions;
mod summarize;
mod turn_usage;
mod verdict;
pub mod wire;

pub use adapter::{FACTS, OpenCode};
pub use lenient::Lenient;
pub use models::{parse_models, parse_version};
pub use normalize::{is_permission_refusal, parse_line};
pub use sessions::pick_session;
pub use summarize::summarize_bytes;
pub use turn_usage::turn_usage;
pub use verdict::verdict;

use crate::{Feed, ParsedLine, StreamParser};
use ganger_events::RoundSummary;

/// Reads an OpenCode `run --format json` stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenCodeStream;

impl StreamParser for OpenCodeStream {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        normalize::parse_line(line)
    }

    fn feed(&mut self, line: &[u8], summary: &mut RoundSummary) -> Feed {
        if let Some(feed) = fast::feed(line, summary) {
            return feed;
        }
        let parsed = normalize::parse_line(line);
        parsed.fold_into(summary);
        Feed {
            progress: parsed.is_progress(),
        }
    }
}
