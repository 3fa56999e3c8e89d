//! The gateway's own failures: bad settings (the caller's input) and a gateway that cannot
//! start (the environment's).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// A setting that cannot be: an allow-list entry, an upstream URL, a CA file.
    #[error("{0}")]
    Invalid(String),
    /// The CA file named in `[gateway] ca` could not be read or held no certificate.
    #[error("the gateway's CA file {}: {reason}", path.display())]
    CaFile { path: PathBuf, reason: String },
    /// The listener could not be made (port taken, socket path not writable).
    #[error("the gateway cannot listen on {at}: {source}")]
    Listen {
        at: String,
        #[source]
        source: std::io::Error,
    },
    /// The gateway's runtime could not be made.
    #[error("the gateway cannot start its runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl GatewayError {
    /// Whether this is bad input (exit 2) rather than the environment's failure (exit 70).
    pub fn is_invalid(&self) -> bool {
        matches!(self, GatewayError::Invalid(_) | GatewayError::CaFile { .. })
    }
}
