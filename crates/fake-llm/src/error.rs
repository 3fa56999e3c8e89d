//! The errors the crate returns: one for scripts (reading, parsing, checking) and one for the
//! server (binding, running, waiting for requests).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A script that cannot be read, parsed or used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The script file could not be read.
    #[error("failed to read script {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The script is not valid TOML or does not have the script's shape.
    #[error("failed to parse script {origin}")]
    Parse {
        /// The file, or `<string>`.
        origin: String,
        /// What the TOML reader said.
        source: Box<toml::de::Error>,
    },
    /// A turn breaks a rule.
    #[error("invalid script: turns[{index}]: {reason}")]
    InvalidTurn {
        /// The turn's index (0-based, as in `turns[0]`).
        index: usize,
        /// Which rule.
        reason: String,
    },
    /// A turn's `when` is not a regular expression.
    #[error("invalid script: turns[{index}]: `when` is not a valid regular expression")]
    Pattern {
        /// The turn's index (0-based).
        index: usize,
        /// What the regex compiler said.
        source: Box<regex::Error>,
    },
    /// A script-wide setting breaks a rule.
    #[error("invalid script: {reason}")]
    Invalid {
        /// Which rule.
        reason: String,
    },
}

/// The server failed to start, or a test's wait ran out.
#[derive(Debug, thiserror::Error)]
pub enum FakeLlmError {
    /// The script was refused.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// The address could not be bound.
    #[error("failed to listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The server's runtime or background thread could not be started, or serving failed.
    #[error("failed to run the fake model server")]
    Serve {
        /// Why.
        source: std::io::Error,
    },
    /// [`crate::FakeLlm::wait_for_requests`] ran out of time.
    #[error("timed out after {timeout:?} waiting for {wanted} requests; {got} arrived")]
    WaitTimedOut {
        /// How many requests were awaited.
        wanted: usize,
        /// How many had arrived.
        got: usize,
        /// How long the wait was.
        timeout: Duration,
    },
}
