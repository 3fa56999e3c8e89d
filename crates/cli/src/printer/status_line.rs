//! A status line kept at the bottom of a terminal (a fleet's counts) while lines of progress
//! scroll above it: on stderr, only for a person at a terminal, and the only place the CLI
//! writes terminal control sequences of its own.

use super::Printer;
use std::io::{IsTerminal, Write};

/// Erases the terminal's current line and returns to its start.
const CLEAR_LINE: &str = "\r\x1b[K";

/// The status line of one run.
#[derive(Debug, Default)]
pub struct StatusLine {
    /// Whether there is a terminal to keep it on (human output, stderr a terminal).
    live: bool,
    shown: Option<String>,
}

impl StatusLine {
    /// A status line for this run: live only for human output with stderr on a terminal.
    pub fn for_run(out: Printer) -> StatusLine {
        StatusLine {
            live: !out.is_json() && std::io::stderr().is_terminal(),
            shown: None,
        }
    }

    /// Shows `text` as the status line (when it changed).
    pub fn show(&mut self, text: &str) {
        if self.live && self.shown.as_deref() != Some(text) {
            let _ = write!(std::io::stderr(), "{CLEAR_LINE}{text}");
        }
        self.shown = Some(text.to_owned());
    }

    /// Prints something (with `print`) above the status line, which is drawn again below it.
    pub fn above(&mut self, print: impl FnOnce()) {
        if self.live {
            let _ = write!(std::io::stderr(), "{CLEAR_LINE}");
        }
        print();
        if self.live
            && let Some(text) = &self.shown
        {
            let _ = write!(std::io::stderr(), "{text}");
        }
    }

    /// Leaves the status line as it is and moves below it.
    pub fn end(&mut self) {
        if self.live {
            let _ = writeln!(std::io::stderr());
        }
    }
}
