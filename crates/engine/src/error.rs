//! The engine's error: a kind that the CLI maps to an exit code, a one-line message naming the
//! problem, and an optional hint saying what to do about it.

use std::fmt;

/// What kind of failure, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad arguments, or a state that does not allow the command (exit 2).
    Invalid,
    /// The model is not available (exit 3).
    ModelUnavailable,
}

/// A failure of a ganger command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

impl EngineError {
    /// Bad arguments or state.
    pub fn invalid(message: impl Into<String>) -> Self {
        EngineError {
            kind: ErrorKind::Invalid,
            message: message.into(),
            hint: None,
        }
    }

    /// The model is not available.
    pub fn model(message: impl Into<String>) -> Self {
        EngineError {
            kind: ErrorKind::ModelUnavailable,
            message: message.into(),
            hint: None,
        }
    }

    /// The same error with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EngineError {}

/// The engine's result.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

macro_rules! from_error {
    ($($source:ty),*) => {$(
        impl From<$source> for EngineError {
            fn from(error: $source) -> Self {
                EngineError::invalid(error.to_string())
            }
        }
    )*};
}

from_error!(
    ganger_store::StoreError,
    ganger_git::GitError,
    ganger_sandbox::SandboxError,
    crate::config::ConfigError,
    ganger_agents::PlanError
);

impl EngineError {
    /// An I/O failure on `path`.
    pub fn io(action: &str, path: &std::path::Path, error: std::io::Error) -> Self {
        EngineError::invalid(format!("failed to {action} {}: {error}", path.display()))
    }
}
