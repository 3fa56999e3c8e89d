//! `[gateway]`: the model gateway that holds a round's keys (docs/gateway.md). On by default:
//! a round given keys (`--key`, `[keys]`) runs its agent with placeholders and its base URL
//! pointed at the gateway.

use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayConfig {
    /// `false` hands the keys to the agent in its environment, as before the gateway.
    pub enabled: bool,
    /// A PEM file of certificates trusted for upstreams besides the system's roots (a private
    /// endpoint's CA).
    pub ca: Option<PathBuf>,
}

impl Default for GatewayConfig {
    fn default() -> GatewayConfig {
        GatewayConfig {
            enabled: true,
            ca: None,
        }
    }
}
