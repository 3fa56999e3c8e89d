//! Errors talking to the Docker daemon.

/// A failure of the Docker daemon or of the way to it.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    /// No daemon answers on the socket.
    #[error("the Docker daemon does not answer at {socket}: {reason}")]
    Unreachable { socket: String, reason: String },
    /// The daemon answered with an error.
    #[error("Docker: {0}")]
    Api(String),
    /// A local file the request needs could not be read or written.
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

impl DockerError {
    /// Whether the daemon said the object does not exist (HTTP 404).
    pub fn is_not_found(&self) -> bool {
        matches!(self, DockerError::Api(message) if message.contains("404"))
    }
}

impl From<bollard::errors::Error> for DockerError {
    fn from(error: bollard::errors::Error) -> Self {
        match error {
            bollard::errors::Error::DockerResponseServerError {
                status_code,
                message,
            } => DockerError::Api(format!("{message} (HTTP {status_code})")),
            other => DockerError::Api(other.to_string()),
        }
    }
}
