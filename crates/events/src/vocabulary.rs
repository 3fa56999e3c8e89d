//! The settings a task is recorded with and every layer speaks of: what its agent may do
//! ([`Permission`]), where its rounds run ([`SandboxKind`]) and the network a sandboxed round
//! gets ([`Network`]). Each is read from text once, where it enters (a configuration file,
//! an option, a request, a stored row), and written as the same words everywhere: stored
//! rows, `--json`, `ganger.toml`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Declares a setting's enum with the word of each value: `as_str`, `Display` and serde
/// write the words, `FromStr` and serde read them back; `refused` says what a word that names
/// none is.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $word:literal,)+
        }
        refused($text:ident) => $refusal:expr;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$variant_meta])* #[serde(rename = $word)] $variant,)+
        }

        impl $name {
            /// The value's word in `ganger.toml`, options, stored rows and reports.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

        }

        impl FromStr for $name {
            type Err = String;

            fn from_str($text: &str) -> Result<Self, Self::Err> {
                match $text {
                    $($word => Ok($name::$variant),)+
                    _ => Err($refusal),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

words! {
    /// What the agent may do in its worktree: one ganger setting that each adapter maps to
    /// its CLI's own permission options.
    pub enum Permission {
        /// Edit files and run commands without asking (the agent's own auto-approve mode).
        #[default]
        Write = "write",
        /// Read and answer only: file-writing and shell tools are refused or withheld.
        ReadOnly = "read-only",
    }
    refused(text) => format!("unknown permission {text:?}: expected write or read-only");
}

words! {
    /// Where a round's agent runs.
    pub enum SandboxKind {
        /// As the user would run it by hand: no isolation beyond the process group.
        #[default]
        Local = "local",
        /// Inside bubblewrap: the root read-only, homes and secrets hidden, the worktree
        /// writable.
        Bwrap = "bwrap",
        /// In a container of its own, through the Docker Engine API.
        Docker = "docker",
    }
    refused(text) => format!(
        "unknown sandbox {text:?}; sandboxes: {}",
        SandboxKind::NAMES.join(", ")
    );
}

impl SandboxKind {
    pub const ALL: [SandboxKind; 3] = [SandboxKind::Local, SandboxKind::Bwrap, SandboxKind::Docker];
    pub const NAMES: [&'static str; 3] = ["local", "bwrap", "docker"];
}

words! {
    /// The network of a sandboxed round.
    pub enum Network {
        /// The host's network (bwrap), or the configured Docker network (`host` by default):
        /// the agent must reach its model.
        #[default]
        Shared = "shared",
        /// Nothing but a loopback of its own.
        None = "none",
        /// A loopback of its own whose only way out is the round's model gateway: the model
        /// through the gateway, and the hosts of the allow-list through its proxy
        /// (docs/gateway.md).
        Gateway = "gateway",
    }
    refused(text) => format!("unknown network {text:?}; networks: shared, none, gateway");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;

    /// Each value's word reads back as text and as JSON, and the JSON is the word.
    fn round_trips<T>(values: &[T])
    where
        T: Copy + PartialEq + fmt::Debug + fmt::Display + FromStr + Serialize + DeserializeOwned,
        T::Err: fmt::Debug,
    {
        for &value in values {
            let word = value.to_string();
            assert_eq!(word.parse::<T>().unwrap(), value);
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<T>(&json).unwrap(), value);
        }
    }

    /// The words are the same as text and as JSON (stored rows, `--json`, `ganger.toml`).
    #[test]
    fn names_read_back_as_text_and_as_json() {
        round_trips(&SandboxKind::ALL);
        round_trips(&[Network::Shared, Network::None, Network::Gateway]);
        round_trips(&[Permission::Write, Permission::ReadOnly]);
        assert_eq!(
            SandboxKind::ALL.map(SandboxKind::as_str),
            SandboxKind::NAMES
        );
        assert_eq!(Permission::ReadOnly.as_str(), "read-only");
        assert_eq!("none".parse::<Network>(), Ok(Network::None));
        assert!("podman".parse::<SandboxKind>().is_err());
        assert!("bridge".parse::<Network>().is_err());
        assert!("readonly".parse::<Permission>().is_err());
    }
}
