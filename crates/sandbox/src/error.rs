//! Errors of the sandbox layer.

use std::path::PathBuf;

/// A failure to start, watch or stop a round's processes.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The agent's program could not be started.
    #[error("failed to start {program}: {source}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The sandbox cannot run here (bubblewrap missing, no Docker daemon), or cannot confine
    /// this round (its worker image is not built, its settings are wrong).
    #[error("{message}")]
    Unusable {
        message: String,
        hint: Option<String>,
    },
    /// What the sandbox needs does not answer (the Docker daemon): a failure of the
    /// environment, not of the request.
    #[error("{message}")]
    Unavailable {
        message: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A file the sandbox needs could not be used.
    #[error("failed to access {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    /// A sandbox that cannot run here, or cannot confine a round, and why; with what to do
    /// about it when there is something.
    pub fn unusable(message: impl Into<String>) -> Self {
        SandboxError::Unusable {
            message: message.into(),
            hint: None,
        }
    }

    /// What to do about it, when the error says.
    pub fn hint(&self) -> Option<&str> {
        match self {
            SandboxError::Unusable { hint, .. } => hint.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        SandboxError::Io {
            path: path.into(),
            source,
        }
    }
}
