//! Where a provider's requests really go: `https://host[:port][/path]` (or `http://` for a
//! server on this machine), read once when the grant is made.

use crate::error::GatewayError;

/// A provider's real endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// The base URL's path without a trailing `/` (`/v1`, or empty).
    pub path: String,
}

impl Upstream {
    /// Reads a base URL. Plain `http://` is taken only for loopback hosts: a key sent in clear
    /// over a network is what the gateway exists to prevent.
    pub fn parse(url: &str) -> Result<Upstream, GatewayError> {
        let bad = |why: &str| GatewayError::Invalid(format!("upstream {url:?}: {why}"));
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(bad("write https://HOST[:PORT][/PATH]"));
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], rest[at..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad("credentials do not belong in the URL; name a key file"));
        }
        let (host, port) = split_host_port(authority, if tls { 443 } else { 80 })
            .ok_or_else(|| bad("the host or port cannot be read"))?;
        if !tls && !is_loopback_host(&host) {
            return Err(bad("plain http is allowed only to this machine; use https"));
        }
        if path.contains(['?', '#']) {
            return Err(bad("a base URL has no query or fragment"));
        }
        Ok(Upstream {
            tls,
            host,
            port,
            path: path.to_owned(),
        })
    }

    /// `host:port`, as the pool keys connections.
    pub fn origin(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The `Host` header's value.
    pub fn host_header(&self) -> String {
        let default = if self.tls { 443 } else { 80 };
        if self.port == default {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// `host[:port]` or `[v6][:port]`, with `default` when no port is written.
pub(crate) fn split_host_port(text: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(port) => port.parse().ok()?,
            None if after.is_empty() => default,
            None => return None,
        };
        (host.to_owned(), port)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), port.parse().ok()?),
            None => (text.to_owned(), default),
        }
    };
    let fine = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
    (fine && port != 0).then_some((host.to_ascii_lowercase(), port))
}

pub(crate) fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_read_and_clear_text_is_only_for_this_machine() {
        let up = Upstream::parse("https://api.example.com/v1/").unwrap();
        assert_eq!(
            (up.tls, up.host.as_str(), up.port),
            (true, "api.example.com", 443)
        );
        assert_eq!(up.path, "/v1");
        assert_eq!(up.host_header(), "api.example.com");
        let local = Upstream::parse("http://127.0.0.1:18181").unwrap();
        assert_eq!((local.port, local.path.as_str()), (18181, ""));
        assert_eq!(local.host_header(), "127.0.0.1:18181");
        assert!(Upstream::parse("http://api.example.com/v1").is_err());
        assert!(Upstream::parse("ftp://x").is_err());
        assert!(Upstream::parse("https://user:pw@api.example.com").is_err());
        assert!(Upstream::parse("https://api.example.com:0").is_err());
        assert!(Upstream::parse("https://[::1]:8443/x").unwrap().port == 8443);
    }
}
