//! The errors of the git layer: a git command that failed (with what it said), a repository
//! that is not what ganger expects, or an I/O failure on the repository's files.

use std::path::PathBuf;

/// A failure in the git layer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started at all.
    #[error("failed to run git: {0}")]
    Spawn(#[source] std::io::Error),
    /// A git command exited with an error.
    #[error("`git {args}` failed in {dir}: {stderr}")]
    Command {
        args: String,
        dir: PathBuf,
        stderr: String,
    },
    /// A git command talking to a remote heard nothing from it for `silence`, and was ended.
    #[error("`git {args}` was ended: the remote {peer} was silent for {} s", .silence.as_secs_f64())]
    Silent {
        args: String,
        peer: String,
        silence: std::time::Duration,
    },
    /// A path is not inside a git repository ganger can use.
    #[error("{path} is not inside a git repository with a work tree")]
    NotARepo { path: PathBuf },
    /// The repository's files are not in a shape this layer reads.
    #[error("unexpected repository data in {path}: {what}")]
    Format { path: PathBuf, what: String },
    /// Reading or writing the repository's files failed.
    #[error("failed to access {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl GitError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        GitError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn format(path: impl Into<PathBuf>, what: impl Into<String>) -> Self {
        GitError::Format {
            path: path.into(),
            what: what.into(),
        }
    }
}
