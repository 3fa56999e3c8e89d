//! What `ganger-dev` prints: a result as text or as one JSON document on stdout, an error as
//! `error:` lines on stderr (or `ganger.error/1` with `--json`), and the exit codes it shares
//! with `ganger` (docs/commands.md).

use ganger_engine::{EngineError, ErrorDocument};
use serde::Serialize;
use std::io::Write;

/// Everything passed (or the command did what it was asked).
pub const OK: u8 = 0;
/// Something did not pass: a newest release fails a scenario, or a pin stayed.
pub const NOT_DONE: u8 = 1;
/// Bad arguments or state.
pub const INVALID: u8 = 2;

/// Prints `value` as pretty JSON with `json`, else the text `human` makes.
pub fn print<T: Serialize>(
    json: bool,
    value: &T,
    human: impl FnOnce() -> String,
) -> ganger_engine::Result<()> {
    let text = if json {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|e| EngineError::environment("failed to write the JSON", e))?;
        text.push('\n');
        text
    } else {
        human()
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(EngineError::environment("failed to write the output", e))
        }
        _ => Ok(()),
    }
}

/// Prints `error` (its causes and hint), and returns its exit code.
pub fn fail(json: bool, error: &EngineError) -> u8 {
    let document = ErrorDocument::from(error);
    if json {
        let text = serde_json::to_string_pretty(&document).unwrap_or_default();
        let _ = writeln!(std::io::stdout().lock(), "{text}");
        return document.exit_code;
    }
    let mut text = format!("error: {}\n", document.error);
    for cause in &document.causes {
        text.push_str(&format!("  caused by: {cause}\n"));
    }
    if let Some(hint) = &document.hint {
        text.push_str(&format!("hint: {hint}\n"));
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
    document.exit_code
}

/// A line of the result on stdout, for a person (a closed pipe ends nothing).
pub fn say(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// A step of progress on stderr, for a person only (stdout is the result alone).
pub fn note(json: bool, text: &str) {
    if !json {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}
