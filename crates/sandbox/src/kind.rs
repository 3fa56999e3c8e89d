//! The three places a round can run, and the network a sandboxed round gets.

use std::fmt;
use std::str::FromStr;

/// Where a round's agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

    #[test]
    fn names_read_back() {
        for name in SandboxKind::NAMES {
            assert_eq!(name.parse::<SandboxKind>().map(|k| k.as_str()), Ok(name));
        }
        assert!("podman".parse::<SandboxKind>().is_err());
        assert_eq!("none".parse::<Network>(), Ok(Network::None));
        assert!("bridge".parse::<Network>().is_err());
    }
}
