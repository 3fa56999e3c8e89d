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
    /// A file the sandbox needs could not be used.
    #[error("failed to access {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        SandboxError::Io {
            path: path.into(),
            source,
        }
    }
}
