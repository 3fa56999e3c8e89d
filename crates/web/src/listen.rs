//! Where the server listens, and whether it may: loopback or a unix socket (made readable by
//! its owner only) always; any other address only with a token configured beyond the one
//! `serve` writes for its owner (`.ganger/web/tokens.toml`), so that a dashboard reachable from
//! the network is never one that nobody set up on purpose.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// The address `--web` listens on.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

/// Where to listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Tcp(SocketAddr),
    /// A unix socket at this path (`unix:PATH`).
    Unix(PathBuf),
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(addr) => write!(f, "{addr}"),
            Listen::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// Reads `ADDR:PORT` (`[::1]:PORT` for IPv6) or `unix:PATH`, or says what it expected (clap
/// puts the option and the value before it).
pub fn parse_listen(text: &str) -> Result<Listen, String> {
    if let Some(path) = text.strip_prefix("unix:") {
        if path.is_empty() {
            return Err("expected unix:PATH, with a path".to_owned());
        }
        return Ok(Listen::Unix(PathBuf::from(path)));
    }
    text.parse::<SocketAddr>().map(Listen::Tcp).map_err(|_| {
        "expected ADDRESS:PORT (such as 127.0.0.1:7878 or [::1]:7878) or unix:PATH".to_owned()
    })
}

/// Whether `addr` is reachable only from this machine.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Refuses a non-loopback address unless tokens were configured on purpose.
pub fn check_listen(addr: &SocketAddr, configured_tokens: usize) -> Result<(), String> {
    if is_loopback(addr) || configured_tokens > 0 {
        return Ok(());
    }
    Err(format!(
        "refusing to listen on {addr}: it is reachable from other machines and no token is \
         configured in .ganger/web/tokens.toml (listen on 127.0.0.1, or configure tokens)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_is_allowed_without_configured_tokens() {
        let ok = [
            "127.0.0.1:1",
            "127.8.0.1:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ];
        for text in ok {
            let Listen::Tcp(addr) = parse_listen(text).unwrap() else {
                panic!("{text} is not tcp")
            };
            assert_eq!(check_listen(&addr, 0), Ok(()), "{text}");
        }
        for text in ["0.0.0.0:1", "[::]:1", "192.168.1.2:1"] {
            let Listen::Tcp(addr) = parse_listen(text).unwrap() else {
                panic!("{text} is not tcp")
            };
            assert!(check_listen(&addr, 0).is_err(), "{text}");
            assert_eq!(check_listen(&addr, 1), Ok(()), "{text}");
        }
    }

    #[test]
    fn a_listen_address_without_a_port_is_refused() {
        assert!(parse_listen("127.0.0.1").is_err());
        assert!(parse_listen("localhost:80").is_err());
        assert!(parse_listen("unix:").is_err());
        assert_eq!(
            parse_listen("unix:/run/g.sock"),
            Ok(Listen::Unix("/run/g.sock".into()))
        );
    }
}
