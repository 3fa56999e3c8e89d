//! Summarizing a finished OpenCode stream (`ganger summarize`, the benchmark): the very per-line
//! path a live round takes, over a whole buffer.

use crate::opencode::OpenCodeStream;
use ganger_events::RoundSummary;

/// The summary of a whole OpenCode stream: its lines cut as [`scan::lines`] cuts them (blank
/// lines skipped, `\r\n` endings stripped), each fed to an [`OpenCodeStream`].
pub fn summarize_bytes(data: &[u8]) -> RoundSummary {
    crate::summarize_stream(&mut OpenCodeStream, data)
}
