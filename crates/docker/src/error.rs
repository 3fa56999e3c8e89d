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

    /// Whether the daemon refused because the name is taken (HTTP 409).
    pub fn is_conflict(&self) -> bool {
        matches!(self, DockerError::Api(message) if message.ends_with("(HTTP 409)"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_and_a_missing_object_are_told_apart() {
        let taken = DockerError::from(bollard::errors::Error::DockerResponseServerError {
            status_code: 409,
            message: "Conflict. The container name \"/ganger-r1\" is already in use".into(),
        });
        let missing = DockerError::from(bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            message: "No such container: ganger-r1".into(),
        });
        assert!(taken.is_conflict() && !taken.is_not_found());
        assert!(missing.is_not_found() && !missing.is_conflict());
    }
}
