//! What each round may do through the gateway, found by its placeholder key.
//!
//! The embedder issues a grant when a round starts and revokes it when the round ends; the
//! placeholder it gets back is the only key the agent ever sees. A revoked or unknown
//! placeholder opens nothing.

use crate::error::GatewayError;
use crate::upstream::{Upstream, split_host_port};
use crate::usage::Tokens;
use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// A host and port the proxy lets a round reach: `host:port`, or `*.domain:port` for every
/// name under `domain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    pub host: String,
    pub port: u16,
}

impl HostPort {
    /// Reads one allow-list entry; the port is required.
    pub fn parse(text: &str) -> Result<HostPort, GatewayError> {
        let bad = || {
            GatewayError::Invalid(format!(
                "allow-list entry {text:?}: write HOST:PORT, such as packages.example.org:443"
            ))
        };
        let has_port =
            text.rsplit_once(':').is_some_and(|(_, p)| !p.is_empty()) && !text.ends_with(']');
        if !has_port {
            return Err(bad());
        }
        let wildcard = text.strip_prefix("*.");
        let (host, port) = split_host_port(wildcard.unwrap_or(text), 0).ok_or_else(bad)?;
        let host = if wildcard.is_some() {
            format!("*.{host}")
        } else {
            host
        };
        Ok(HostPort { host, port })
    }

    /// Whether `host:port` is this entry.
    pub fn admits(&self, host: &str, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        let host = host.to_ascii_lowercase();
        match self.host.strip_prefix("*.") {
            Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
            None => host == self.host,
        }
    }
}

impl std::fmt::Display for HostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// One round's permission.
#[derive(Debug, Clone)]
pub struct Grant {
    /// How records name the round (`slug#2`).
    pub round: String,
    pub provider: String,
    /// Where model requests go; none for a round whose agent's model route is not known (it
    /// may use the proxy only).
    pub upstream: Option<Upstream>,
    /// Read when a request needs the key; its content never leaves the gateway but upstream.
    /// None: the round's agent holds its own credentials (or needs none), and its requests go
    /// upstream as they came.
    pub key_file: Option<PathBuf>,
    /// Requests are refused once the round's counted tokens reach this.
    pub budget_tokens: Option<u64>,
    /// What `CONNECT` may reach besides the gateway itself.
    pub allow: Vec<HostPort>,
}

/// What a round has spent through the gateway so far.
#[derive(Debug, Default)]
pub struct Spend {
    input: AtomicU64,
    output: AtomicU64,
    requests: AtomicU64,
}

impl Spend {
    pub(crate) fn add(&self, tokens: Tokens) {
        self.input.fetch_add(tokens.input, Ordering::Relaxed);
        self.output.fetch_add(tokens.output, Ordering::Relaxed);
    }

    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Tokens counted so far.
    pub fn tokens(&self) -> Tokens {
        Tokens {
            input: self.input.load(Ordering::Relaxed),
            output: self.output.load(Ordering::Relaxed),
        }
    }

    /// Requests forwarded so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
pub(crate) struct Entry {
    pub grant: Grant,
    pub spend: Arc<Spend>,
}

/// The grants of every round this gateway serves.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    inner: Arc<RwLock<HashMap<String, Arc<Entry>>>>,
    /// The grant of a request that carries no placeholder, in a gateway that serves one
    /// round (a sandbox's only way out): see [`Grants::issue_fallback`].
    fallback: Arc<RwLock<Option<String>>>,
}

/// A placeholder's prefix, so that one found in a log is recognisably worthless.
const PLACEHOLDER_PREFIX: &str = "ganger-placeholder-";

impl Grants {
    pub fn new() -> Grants {
        Grants::default()
    }

    /// Registers `grant` and returns its new placeholder key.
    pub fn issue(&self, grant: Grant) -> Result<String, GatewayError> {
        let placeholder = format!("{PLACEHOLDER_PREFIX}{}", random_hex(24)?);
        let entry = Arc::new(Entry {
            grant,
            spend: Arc::new(Spend::default()),
        });
        self.write().insert(placeholder.clone(), entry);
        Ok(placeholder)
    }

    /// Registers `grant` as the one a request or a tunnel without a placeholder falls under:
    /// for a gateway that serves a single round, reached only from that round's sandbox
    /// (through its socket) and from this machine's loopback. The grant must hold no key file:
    /// a request that reaches it goes upstream as it came, with whatever credentials the agent
    /// gave it. Returns its placeholder (to revoke it).
    pub fn issue_fallback(&self, grant: Grant) -> Result<String, GatewayError> {
        if grant.key_file.is_some() {
            return Err(GatewayError::Invalid(
                "a fallback grant never holds a key".to_owned(),
            ));
        }
        let placeholder = self.issue(grant)?;
        *self.fallback.write().unwrap_or_else(|e| e.into_inner()) = Some(placeholder.clone());
        Ok(placeholder)
    }

    /// The fallback grant, while it stands.
    pub(crate) fn fallback(&self) -> Option<Arc<Entry>> {
        let placeholder = self
            .fallback
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        self.find(&placeholder)
    }

    /// Forgets a placeholder: it opens nothing from now on. Returns what the round spent.
    pub fn revoke(&self, placeholder: &str) -> Option<Arc<Spend>> {
        self.write()
            .remove(placeholder)
            .map(|entry| entry.spend.clone())
    }

    /// What the round of `placeholder` has spent, while its grant stands.
    pub fn spend(&self, placeholder: &str) -> Option<Arc<Spend>> {
        self.find(placeholder).map(|entry| entry.spend.clone())
    }

    pub(crate) fn find(&self, placeholder: &str) -> Option<Arc<Entry>> {
        let map = self.inner.read().unwrap_or_else(|e| e.into_inner());
        map.get(placeholder).cloned()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Arc<Entry>>> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

fn random_hex(bytes: usize) -> Result<String, GatewayError> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| GatewayError::Invalid(format!("cannot read /dev/urandom: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `text` looks like a placeholder this gateway makes.
pub(crate) fn is_placeholder(text: &str) -> bool {
    text.starts_with(PLACEHOLDER_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_entries_need_a_port_and_wildcards_cover_names_below_only() {
        let entry = HostPort::parse("Packages.Example.org:443").unwrap();
        assert!(entry.admits("packages.example.org", 443));
        assert!(!entry.admits("packages.example.org", 80));
        assert!(!entry.admits("evil.packages.example.org", 443));
        let wild = HostPort::parse("*.example.org:443").unwrap();
        assert!(wild.admits("a.example.org", 443));
        assert!(!wild.admits("example.org", 443));
        assert!(!wild.admits("aexample.org", 443));
        for bad in [
            "example.org",
            "example.org:",
            ":443",
            "exa mple.org:443",
            "x:99999",
        ] {
            assert!(HostPort::parse(bad).is_err(), "{bad} was taken");
        }
        assert_eq!(HostPort::parse("[::1]:8080").unwrap().host, "::1");
    }

    #[test]
    fn placeholders_are_random_and_revoked_ones_open_nothing() {
        let grants = Grants::new();
        let grant = Grant {
            round: "t#1".into(),
            provider: "p".into(),
            upstream: Some(Upstream::parse("http://127.0.0.1:1").unwrap()),
            key_file: Some("/nonexistent".into()),
            budget_tokens: None,
            allow: vec![],
        };
        let a = grants.issue(grant.clone()).unwrap();
        let b = grants.issue(grant).unwrap();
        assert_ne!(a, b);
        assert!(is_placeholder(&a) && a.len() > 40);
        assert!(grants.find(&a).is_some());
        assert!(grants.revoke(&a).is_some());
        assert!(grants.find(&a).is_none());
        assert!(grants.find(&b).is_some());
    }

    #[test]
    fn a_fallback_holds_no_key_and_ends_when_revoked() {
        let grants = Grants::new();
        let keyless = Grant {
            round: "t#1".into(),
            provider: "p".into(),
            upstream: None,
            key_file: None,
            budget_tokens: None,
            allow: vec![],
        };
        let keyed = Grant {
            key_file: Some("/k".into()),
            ..keyless.clone()
        };
        assert!(grants.issue_fallback(keyed).is_err());
        assert!(grants.fallback().is_none());
        let placeholder = grants.issue_fallback(keyless).unwrap();
        assert_eq!(grants.fallback().unwrap().grant.round, "t#1");
        grants.revoke(&placeholder);
        assert!(grants.fallback().is_none());
    }
}
