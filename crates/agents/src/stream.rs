//! The contract between a round host and an adapter's stream reader: one line in, the summary
//! updated, and whether the line showed progress.

use crate::scan::{Line, LineCutter};
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
    /// A line that is not a JSON object with a string `type`.
    pub fn malformed() -> ParsedLine {
        ParsedLine {
            kind: None,
            events: Vec::new(),
        }
    }

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

/// The JSON object a line holds, or `None` when it holds something else (a malformed line).
pub(crate) fn json_object(line: &[u8]) -> Option<serde_json::Value> {
    match serde_json::from_slice(line) {
        Ok(value @ serde_json::Value::Object(_)) => Some(value),
        _ => None,
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
    ///
    /// Takes `&mut self` because some streams need memory across lines (Claude reports a
    /// tool's result by the call's id alone; the parser remembers the name).
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine;

    /// Updates `summary` with one line, as `parse_line(line).fold_into(summary)` would.
    fn feed(&mut self, line: &[u8], summary: &mut RoundSummary) -> Feed {
        let parsed = self.parse_line(line);
        parsed.fold_into(summary);
        Feed {
            progress: parsed.is_progress(),
        }
    }
}

/// Feeds one line of a stream to `parser`, as a round does: a line too long to read is only
/// counted (and is not progress: nothing is known of it).
pub fn feed_line(
    parser: &mut dyn StreamParser,
    line: Line<'_>,
    summary: &mut RoundSummary,
) -> Feed {
    match line {
        Line::Content(content) => parser.feed(content, summary),
        Line::TooLong(_) => {
            summary.record_long_line();
            Feed { progress: false }
        }
    }
}

/// The summary of a whole stream: its lines cut as [`crate::scan::stream_lines`] cuts them
/// (blank lines skipped, `\r\n` endings stripped, lines over the cap counted), each fed to
/// `parser` exactly as a live round feeds them. The benchmark and the tests go through here.
pub fn summarize_stream(parser: &mut dyn StreamParser, data: &[u8]) -> RoundSummary {
    let mut summary = RoundSummary::default();
    for line in crate::scan::stream_lines(data) {
        feed_line(parser, line, &mut summary);
    }
    summary
}

/// The summary of a stream read from `reader`, fed line by line to `parser` exactly as
/// [`summarize_stream`] does, reading a large block at a time and cutting lines in place (no
/// copy per line). Memory stays at one block plus at most [`crate::scan::MAX_LINE`] of an
/// unfinished line, whatever the input (`ganger summarize /dev/zero` included); `ganger
/// summarize` and the reaper's re-reading of a dead round's file go through here.
pub fn summarize_reader(
    parser: &mut dyn StreamParser,
    mut reader: impl std::io::Read,
) -> std::io::Result<RoundSummary> {
    const BLOCK: usize = 4 << 20;
    let mut summary = RoundSummary::default();
    let mut buffer = vec![0u8; BLOCK];
    let mut cutter = LineCutter::default();
    loop {
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        cutter.push(&buffer[..read], |_, line| {
            feed_line(parser, line, &mut summary);
        });
    }
    cutter.finish(|_, line| {
        feed_line(parser, line, &mut summary);
    });
    Ok(summary)
}
