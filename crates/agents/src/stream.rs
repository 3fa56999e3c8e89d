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

/// The summary of a whole stream: its lines cut as [`crate::scan::lines`] cuts them (blank
/// lines skipped, `\r\n` endings stripped), each fed to `parser` exactly as a live round feeds
/// them. `ganger summarize`, the benchmark and the reaper's re-reading of a dead round's file
/// all go through here.
pub fn summarize_stream(parser: &mut dyn StreamParser, data: &[u8]) -> RoundSummary {
    let mut summary = RoundSummary::default();
    for line in crate::scan::lines(data) {
        parser.feed(line, &mut summary);
    }
    summary
}

/// The summary of a stream read from `reader`, fed line by line to `parser` exactly as
/// [`summarize_stream`] does, reading a large block at a time and cutting lines in place (no
/// copy per line); memory stays at one block plus the longest line.
pub fn summarize_reader(
    parser: &mut dyn StreamParser,
    mut reader: impl std::io::Read,
) -> std::io::Result<RoundSummary> {
    const BLOCK: usize = 4 << 20;
    let mut summary = RoundSummary::default();
    let mut buffer = vec![0u8; BLOCK];
    let mut filled = 0;
    loop {
        if filled == buffer.len() {
            // A line longer than the buffer: grow it.
            buffer.resize(buffer.len() * 2, 0);
        }
        let read = match reader.read(&mut buffer[filled..]) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        filled += read;
        let whole = if read == 0 {
            filled
        } else {
            match memchr::memrchr(b'\n', &buffer[..filled]) {
                Some(last) => last + 1,
                None => continue,
            }
        };
        for line in crate::scan::lines(&buffer[..whole]) {
            parser.feed(line, &mut summary);
        }
        if read == 0 {
            return Ok(summary);
        }
        buffer.copy_within(whole..filled, 0);
        filled -= whole;
    }
}
