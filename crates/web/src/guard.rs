//! The checks every request passes before a handler sees it. A browser on another site must
//! not be able to read or act through a user's dashboard, and a program must name who it is:
//!
//! - On loopback, the Host header must name this machine: `localhost` or a loopback address
//!   (`127.0.0.1`, any of 127.0.0.0/8 such as the address bound, `[::1]`,
//!   `[::ffff:127.0.0.1]`): a page that rebinds its own domain name to 127.0.0.1 is refused.
//! - A request with an `Origin` (or `Sec-Fetch-Site: cross-site`) from anywhere but this
//!   server is refused. No CORS header is ever sent, so no other origin can read an answer.
//! - Every `/api/` and `/mcp` request but the OpenAPI description carries a token
//!   (`Authorization: Bearer TOKEN`, the scheme in any case as RFC 9110 says), never a
//!   cookie, so a forged cross-site request carries none. A request that changes state needs
//!   a token with write access.
//!
//! The token's grant goes to the handler as a request extension: the handler acts as its
//! commander, so ownership holds exactly as on the CLI.

use crate::problem::ApiError;
use crate::state::AppState;
use crate::tokens::Access;
use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Paths under `/api/` that need no token.
const PUBLIC_API: [&str; 1] = ["/api/openapi.json"];

pub async fn guard(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    match check(&state, &mut request) {
        Ok(()) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

fn header_text(request: &Request, name: header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// Whether a Host header's name is this machine: `localhost`, or a loopback address.
fn names_this_machine(name: &str) -> bool {
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| crate::listen::is_loopback(&std::net::SocketAddr::new(ip, 0)))
}

/// The token of an `Authorization: Bearer TOKEN` header (the scheme in any case).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

fn check(state: &AppState, request: &mut Request) -> Result<(), ApiError> {
    let host = header_text(request, header::HOST).unwrap_or("").to_owned();
    if state.check_host && !names_this_machine(host_name(&host)) {
        return Err(ApiError::forbidden(format!(
            "host {host:?} is not this machine: the server listens on loopback only"
        )));
    }
    if let Some(origin) = header_text(request, header::ORIGIN) {
        let own = [format!("http://{host}"), format!("https://{host}")];
        if !own.iter().any(|o| o == origin) {
            return Err(ApiError::forbidden(format!(
                "requests from origin {origin} are refused: only this server's own pages may call it"
            )));
        }
    }
    if header_text(request, header::HeaderName::from_static("sec-fetch-site")) == Some("cross-site")
    {
        return Err(ApiError::forbidden(
            "cross-site requests are refused: only this server's own pages may call it",
        ));
    }
    let path = request.uri().path();
    let is_mcp = path == "/mcp" || path.starts_with("/mcp/");
    if !(path.starts_with("/api/") || is_mcp) || PUBLIC_API.contains(&path) {
        return Ok(());
    }
    let secret = header_text(request, header::AUTHORIZATION)
        .and_then(bearer)
        .ok_or_else(|| {
            ApiError::unauthorized("this request needs a token: Authorization: Bearer TOKEN")
                .hint("the owner's token is in .ganger/web/token")
        })?;
    let grant = state
        .tokens
        .grant(secret.as_bytes())
        .cloned()
        .ok_or_else(|| ApiError::unauthorized("the token is not known to this server"))?;
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    if !reads && grant.access != Access::Write {
        return Err(ApiError::forbidden(format!(
            "{} holds a read-only token: it may look, not act",
            grant.commander
        )));
    }
    request.extensions_mut().insert(grant);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{bearer, host_name, names_this_machine};

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for value in ["Bearer abc", "bearer abc", "BEARER  abc ", "BeArEr abc"] {
            assert_eq!(bearer(value), Some("abc"), "{value}");
        }
        for value in ["Basic abc", "Bearer", "Bearer ", "Bearerabc", ""] {
            assert_eq!(bearer(value), None, "{value}");
        }
    }

    #[test]
    fn this_machine_is_localhost_and_every_loopback_address() {
        for name in [
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.0.0.2",
            "::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(names_this_machine(name), "{name}");
        }
        for name in [
            "evil.example",
            "10.0.0.1",
            "::ffff:10.0.0.1",
            "127.0.0.1.nip.io",
            "",
        ] {
            assert!(!names_this_machine(name), "{name}");
        }
    }

    #[test]
    fn host_names_are_read_without_their_ports() {
        assert_eq!(host_name("127.0.0.1:80"), "127.0.0.1");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("[::1]:7878"), "::1");
        assert_eq!(host_name("evil.example:7878"), "evil.example");
    }
}
