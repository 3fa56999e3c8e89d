//! The settings a task is recorded with and every layer speaks of: what its agent may do
//! ([`Permission`]), where its rounds run ([`SandboxKind`]) and the network a sandboxed round
//! gets ([`Network`]). Each is read from text once, where it enters (a configuration file,
//! an option, a request, a stored row), and written as the same words everywhere: stored
//! rows, `--json`, `ganger.toml`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What the agent may do in its worktree: one ganger setting that each adapter maps to its
/// CLI's own permission options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Permission {
    /// Edit files and run commands without asking (the agent's own auto-approve mode).
    #[default]
    Write,
    /// Read and answer only: file-writing and shell tools are refused or withheld.
    ReadOnly,
}

impl Permission {
    /// The setting's name in `ganger.toml`, options and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Write => "write",
            Permission::ReadOnly => "read-only",
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Permission {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "write" => Ok(Permission::Write),
            "read-only" => Ok(Permission::ReadOnly),
            other => Err(format!(
                "unknown permission {other:?}: expected write or read-only"
            )),
        }
    }
}

/// Where a round's agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxKind {
    /// As the user would run it by hand: no isolation beyond the process group.
    #[default]
    Local,
    /// Inside bubblewrap: the root read-only, homes and secrets hidden, the worktree writable.
    Bwrap,
    /// In a container of its own, through the Docker Engine API.
    Docker,
}

impl SandboxKind {
    pub const ALL: [SandboxKind; 3] = [SandboxKind::Local, SandboxKind::Bwrap, SandboxKind::Docker];
    pub const NAMES: [&'static str; 3] = ["local", "bwrap", "docker"];

    pub fn as_str(self) -> &'static str {
        match self {
            SandboxKind::Local => "local",
            SandboxKind::Bwrap => "bwrap",
            SandboxKind::Docker => "docker",
        }
    }
}

impl fmt::Display for SandboxKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "local" => Ok(SandboxKind::Local),
            "bwrap" => Ok(SandboxKind::Bwrap),
            "docker" => Ok(SandboxKind::Docker),
            other => Err(format!(
                "unknown sandbox {other:?}; sandboxes: {}",
                SandboxKind::NAMES.join(", ")
            )),
        }
    }
}

/// The network of a sandboxed round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// The host's network (bwrap), or the configured Docker network (`host` by default): the
    /// agent must reach its model.
    #[default]
    Shared,
    /// Nothing but a loopback of its own.
    None,
}

impl Network {
    pub fn as_str(self) -> &'static str {
        match self {
            Network::Shared => "shared",
            Network::None => "none",
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Network {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "shared" => Ok(Network::Shared),
            "none" => Ok(Network::None),
            other => Err(format!("unknown network {other:?}; networks: shared, none")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words are the same as text and as JSON (stored rows, `--json`, `ganger.toml`).
    #[test]
    fn names_read_back_as_text_and_as_json() {
        for kind in SandboxKind::ALL {
            assert_eq!(kind.as_str().parse::<SandboxKind>(), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(serde_json::from_str::<SandboxKind>(&json).unwrap(), kind);
        }
        assert_eq!(
            SandboxKind::ALL.map(SandboxKind::as_str),
            SandboxKind::NAMES
        );
        assert!("podman".parse::<SandboxKind>().is_err());
        for network in [Network::Shared, Network::None] {
            assert_eq!(network.as_str().parse::<Network>(), Ok(network));
            let json = serde_json::to_string(&network).unwrap();
            assert_eq!(json, format!("\"{network}\""));
        }
        assert_eq!("none".parse::<Network>(), Ok(Network::None));
        assert!("bridge".parse::<Network>().is_err());
        for permission in [Permission::Write, Permission::ReadOnly] {
            assert_eq!(permission.as_str().parse::<Permission>(), Ok(permission));
            let json = serde_json::to_string(&permission).unwrap();
            assert_eq!(json, format!("\"{permission}\""));
        }
        assert_eq!(
            serde_json::to_string(&Permission::ReadOnly).unwrap(),
            "\"read-only\""
        );
        assert!("readonly".parse::<Permission>().is_err());
    }
}
