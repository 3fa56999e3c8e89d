//! The connection: the socket from `DOCKER_HOST` (a `unix://` address) or the default one,
//! a runtime to drive bollard's futures, and the API version agreed with the daemon.

use crate::error::DockerError;
use std::future::Future;

/// The daemon's socket when `DOCKER_HOST` does not name one.
const DEFAULT_SOCKET: &str = "/var/run/docker.sock";
/// Seconds bollard waits for one request (image builds and waits stream for longer).
const REQUEST_TIMEOUT: u64 = 600;

/// A blocking Docker client.
pub struct Docker {
    pub(crate) api: bollard::Docker,
    runtime: tokio::runtime::Runtime,
    socket: String,
}

impl std::fmt::Debug for Docker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Docker")
            .field("socket", &self.socket)
            .finish()
    }
}

/// The socket path ganger talks to.
pub fn socket_path() -> String {
    std::env::var("DOCKER_HOST")
        .ok()
        .and_then(|host| host.strip_prefix("unix://").map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_SOCKET.to_owned())
}

impl Docker {
    /// Connects to the daemon and agrees on an API version; fails when none answers.
    pub fn connect() -> Result<Docker, DockerError> {
        let socket = socket_path();
        let unreachable = |reason: String| DockerError::Unreachable {
            socket: socket.clone(),
            reason,
        };
        if !std::path::Path::new(&socket).exists() {
            return Err(unreachable("no such socket (is dockerd running?)".into()));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unreachable(e.to_string()))?;
        let api = bollard::Docker::connect_with_unix(
            &socket,
            REQUEST_TIMEOUT,
            bollard::API_DEFAULT_VERSION,
        )
        .map_err(|e| unreachable(e.to_string()))?;
        let api = runtime
            .block_on(api.negotiate_version())
            .map_err(|e| unreachable(e.to_string()))?;
        Ok(Docker {
            api,
            runtime,
            socket,
        })
    }

    /// Runs one of bollard's futures to its end.
    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
