//! The stream-json output Claude Code and Qwen Code share: its wire types, its normalization
//! into ganger's events and its success test. Qwen's stream-json is Claude-compatible; where
//! the two differ (usage totals, cost, how an API error shows) is kept in [`Dialect`].
//!
//! - [`StreamJsonParser`]: the [`StreamParser`] a round host feeds, for one dialect. It keeps
//!   the open tool calls across lines (a result names only the call's id) and what it needs to
//!   name the calls a permission refused ([`denials`]), and uses the contract's default
//!   `feed`: the fold of its full parse.
//! - [`verdict`]: whether the round is done, and if not, why.

mod denials;
mod dialect;
mod normalize;
mod tool_calls;
mod verdict;
pub mod wire;

pub use dialect::{Dialect, TextError};
pub use verdict::verdict;

use crate::{ParsedLine, StreamParser};
use denials::Denials;
use tool_calls::ToolCalls;

/// Reads one round's stream-json output.
#[derive(Debug, Clone)]
pub struct StreamJsonParser {
    dialect: Dialect,
    calls: ToolCalls,
    denials: Denials,
}

impl StreamJsonParser {
    /// A reader for a fresh round of `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        StreamJsonParser {
            dialect,
            calls: ToolCalls::default(),
            denials: Denials::default(),
        }
    }
}

impl StreamParser for StreamJsonParser {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        normalize::parse_line(self.dialect, &mut self.calls, &mut self.denials, line)
    }
}
