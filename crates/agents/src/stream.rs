//! The contract between a round host and an adapter's stream reader: one line in, the summary
//! updated, and whether the line showed progress.

use ganger_events::{Event, RoundSummary};

/// One line of an agent's stream, fully parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLine {
    /// The agent's own event type of the line (`step_start`, `tool_use`, ...), or `None` when
    /// the line is not a JSON object with a string `type` (malformed).
    pub kind: Option<String>,
    /// What the line means in ganger's terms (empty for malformed lines).
    pub events: Vec<Event>,
}

impl ParsedLine {
    /// Folds this line into a summary: the reference for what [`StreamParser::feed`] must do.
    pub fn fold_into(&self, summary: &mut RoundSummary) {
        match &self.kind {
            Some(kind) => {
                summary.record_line(kind);
                for event in &self.events {
                    summary.apply(event);
                }
            }
            None => summary.record_malformed(),
        }
    }

    /// Whether the line shows the agent making progress.
    pub fn is_progress(&self) -> bool {
        self.kind.is_some() && self.events.iter().all(Event::is_progress)
    }
}

/// What feeding one line did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feed {
    /// The line showed progress (anything but a retry notice or an empty line).
    pub progress: bool,
}

/// Reads one agent's stream, line by line (without the line terminator).
///
/// `parse_line` is the full parse used by `ganger log`; `feed` is the path rounds use to keep
/// their summary. `feed` may skip work for lines that cannot change the summary beyond a count,
/// but its result must always equal folding `parse_line` (tests hold every adapter to this).
pub trait StreamParser: Send {
    /// The full parse of one line into events.
    fn parse_line(&self, line: &[u8]) -> ParsedLine;

    /// Updates `summary` with one line, as `parse_line(line).fold_into(summary)` would.
    fn feed(&mut self, line: &[u8], summary: &mut RoundSummary) -> Feed {
        let parsed = self.parse_line(line);
        parsed.fold_into(summary);
        Feed {
            progress: parsed.is_progress(),
        }
    }
}
