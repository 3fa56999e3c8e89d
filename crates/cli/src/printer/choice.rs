//! Whether this run prints for a person or for a program, chosen once from `--json`: every
//! command hands its result to a [`Printer`], which writes the JSON document or the human
//! text, so that no command decides the format itself. Progress lines are a person's only;
//! warnings go to stderr either way, so that a program reading stdout still sees them.

use super::{emit, emit_err, emit_json, emit_json_line, notice_line};
use ganger_engine::Notice;
use serde::Serialize;

/// How this run prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Printer {
    json: bool,
}

impl Printer {
    /// JSON documents with `json`, human text otherwise.
    pub fn new(json: bool) -> Printer {
        Printer { json }
    }

    /// Whether this run prints JSON.
    pub fn is_json(self) -> bool {
        self.json
    }

    /// A command's result: `value` as one JSON document, or the text `human` makes of it.
    pub fn print<T: Serialize + ?Sized>(
        self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> std::io::Result<()> {
        if self.json {
            emit_json(value)
        } else {
            emit(&human())
        }
    }

    /// One result of many that come as they happen (`watch --follow`, `log`, a fleet's
    /// events): a line of JSON each, or its text.
    pub fn item<T: Serialize + ?Sized>(
        self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> std::io::Result<()> {
        if self.json {
            emit_json_line(value)
        } else {
            emit(&human())
        }
    }

    /// A step of progress, for a person only (`--json` prints just the result).
    pub fn progress(self, text: &str) -> std::io::Result<()> {
        if self.json { Ok(()) } else { emit(text) }
    }

    /// A step of progress on stderr, for a person only: for a command whose stdout is its
    /// result alone.
    pub fn note(self, text: &str) -> std::io::Result<()> {
        if self.json { Ok(()) } else { emit_err(text) }
    }

    /// A warning: on stderr, seen with `--json` too.
    pub fn warn(self, text: &str) -> std::io::Result<()> {
        emit_err(text)
    }

    /// The engine's notices: progress lines, and the untested-version warning on stderr.
    pub fn notices(self) -> impl FnMut(Notice) {
        move |notice| {
            let line = notice_line(&notice);
            let _ = if matches!(notice, Notice::UntestedVersion { .. }) {
                self.warn(&line)
            } else {
                self.progress(&line)
            };
        }
    }
}
