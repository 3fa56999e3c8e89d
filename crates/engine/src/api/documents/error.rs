//! `ganger.error/1`: a failure as the command line prints it with `--json`, as the MCP server
//! answers a tool call it refuses, and as the HTTP API answers a refused request (which names
//! the refusals by their status: `not-found`, `conflict`, `forbidden`, `unauthorized`).

use crate::base::error::EngineError;
use serde::Serialize;

/// The schema of [`ErrorDocument`].
pub const ERROR_SCHEMA: &str = "ganger.error/1";

/// `ganger.error/1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorDocument {
    pub schema: &'static str,
    /// `invalid`, `environment`, ... (docs/json.md).
    pub kind: &'static str,
    /// The message: one line naming the problem.
    pub error: String,
    /// What the failure came from, outermost first (left out when there is nothing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    pub hint: Option<String>,
    /// What the command line exits with.
    pub exit_code: u8,
}

impl ErrorDocument {
    /// A failure of kind `kind` that is not the engine's (an argument the command line could
    /// not read, a request the server refused before the engine saw it).
    pub fn new(kind: &'static str, error: impl Into<String>, exit_code: u8) -> ErrorDocument {
        ErrorDocument {
            schema: ERROR_SCHEMA,
            kind,
            error: error.into(),
            causes: Vec::new(),
            hint: None,
            exit_code,
        }
    }

    /// The same document with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> ErrorDocument {
        self.hint = Some(hint.into());
        self
    }
}

impl From<&EngineError> for ErrorDocument {
    fn from(error: &EngineError) -> ErrorDocument {
        ErrorDocument {
            causes: error.causes(),
            hint: error.hint.clone(),
            ..ErrorDocument::new(error.kind.as_str(), &error.message, error.kind.exit_code())
        }
    }
}
