//! The one printer: every command's output goes through here, as human text or as one JSON
//! document (`--json`). Human text uses no colour. Terminal controls in what is printed (it
//! carries agents' and checks' text) are written as escapes ([`escape_controls`]). A closed
//! stdout (`ganger status | head`) is a clean end, not a panic.

mod choice;
mod controls;
mod evidence;
mod human;
mod pipeline;
mod race;
mod report;
mod status_line;

pub use choice::Printer;
pub use controls::{escape_controls, escape_controls_but_colours};
pub use evidence::{groups_text, journal_entry_text, journal_text};
pub use human::{notice_line, task_table};
pub use pipeline::pipeline_text;
pub use race::race_text;
pub use report::report_text;
pub use status_line::StatusLine;

use ganger_engine::ErrorDocument;
use serde::Serialize;
use std::io::Write;

/// Writes to stdout, terminal controls escaped; a broken pipe ends quietly.
pub fn emit(text: &str) -> std::io::Result<()> {
    emit_verbatim(escape_controls(text).as_bytes())
}

/// Writes bytes to stdout as they are: only for output that must stay exact when it goes to a
/// file or a pipe (a patch, a raw stream), and is escaped by its command on a terminal.
pub fn emit_verbatim(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Writes to stderr (warnings that must be seen even when stdout is JSON), terminal controls
/// escaped.
pub fn emit_err(text: &str) -> std::io::Result<()> {
    let mut err = std::io::stderr().lock();
    err.write_all(escape_controls(text).as_bytes())?;
    err.flush()
}

/// Writes a value as pretty JSON with a trailing newline.
pub fn emit_json<T: Serialize + ?Sized>(value: &T) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    emit(&format!("{text}\n"))
}

/// Writes a value as one line of JSON (a stream of documents, as `watch --follow --json`).
pub fn emit_json_line<T: Serialize + ?Sized>(value: &T) -> std::io::Result<()> {
    let text = serde_json::to_string(value).map_err(std::io::Error::other)?;
    emit(&format!("{text}\n"))
}

/// Writes one error line (and a hint line), to stderr or as JSON on stdout.
pub fn emit_error(json: bool, message: &str, hint: Option<&str>, code: u8) {
    let mut document = ErrorDocument::new(kind_of_code(code), message, code);
    document.hint = hint.map(str::to_owned);
    emit_failure(json, &document);
}

/// The kind an exit code stands for, for errors that were not the engine's.
fn kind_of_code(code: u8) -> &'static str {
    match code {
        1 => "round-failed",
        3 => "model-unavailable",
        4 => "wait-timeout",
        70 => "environment",
        _ => "invalid",
    }
}

/// Prints an error: `error: MESSAGE`, a `caused by:` line per cause, then `hint: HINT` (or
/// the document itself, `ganger.error/1`, with `--json`).
pub fn emit_failure(json: bool, failure: &ErrorDocument) {
    if json {
        let _ = emit_json(failure);
        return;
    }
    let mut text = format!("error: {}\n", failure.error);
    for cause in &failure.causes {
        text.push_str(&format!("  caused by: {cause}\n"));
    }
    if let Some(hint) = &failure.hint {
        text.push_str(&format!("hint: {hint}\n"));
    }
    let _ = emit_err(&text);
}
