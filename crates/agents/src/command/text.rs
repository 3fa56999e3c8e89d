//! The plain-text stream of a `command` agent: every non-empty line is text the agent wrote;
//! the last one is its answer. There are no sessions, tools or usage to read.

use crate::{ParsedLine, StreamParser};
use ganger_events::Event;

/// Reads a plain-text stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextStream;

impl StreamParser for TextStream {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        ParsedLine {
            kind: Some("text".into()),
            events: if text.is_empty() {
                Vec::new()
            } else {
                vec![Event::Text { text }]
            },
        }
    }
}
