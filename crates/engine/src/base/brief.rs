//! The task text of a round, from `--brief FILE` or `--message TEXT`: never empty, at most
//! 100 KB, and sent exactly as written (an agent that reads it from stdin sees a leading dash
//! or quotes as text).

use crate::base::error::{EngineError, Result};
use std::path::PathBuf;

/// The largest prompt, in bytes.
pub const MAX_PROMPT: usize = 100_000;

/// Where the task text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Brief {
    File(PathBuf),
    Message(String),
}

/// Reads and checks the task text.
pub fn read_brief(brief: &Brief) -> Result<String> {
    let text = match brief {
        Brief::Message(text) => text.clone(),
        Brief::File(path) => std::fs::read(path)
            .map_err(|e| {
                EngineError::invalid(format!("cannot read the brief {}: {e}", path.display()))
            })
            .and_then(|bytes| {
                String::from_utf8(bytes).map_err(|_| {
                    EngineError::invalid(format!("the brief {} is not UTF-8 text", path.display()))
                })
            })?,
    };
    if text.trim().is_empty() {
        return Err(EngineError::invalid("the task text is empty"));
    }
    if let Some(at) = text.find('\0') {
        return Err(EngineError::invalid(format!(
            "the task text holds a NUL byte (at byte {at}); give text"
        )));
    }
    if text.len() > MAX_PROMPT {
        return Err(EngineError::invalid(format!(
            "the task text is {} bytes, over the limit of {MAX_PROMPT}; shorten it or point the worker to files",
            text.len()
        )));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_oversize_texts_are_refused_and_others_kept_exactly() {
        assert!(read_brief(&Brief::Message("  \n\t".into())).is_err());
        assert!(read_brief(&Brief::Message("x".repeat(MAX_PROMPT + 1))).is_err());
        assert!(read_brief(&Brief::Message("a\0b".into())).is_err());
        let exact = "  -leading dash and \"quotes\"\n".to_owned();
        assert_eq!(read_brief(&Brief::Message(exact.clone())).unwrap(), exact);
        let missing = read_brief(&Brief::File("/nonexistent/brief.md".into())).unwrap_err();
        assert!(
            missing.message.contains("/nonexistent/brief.md"),
            "{missing}"
        );
    }
}
