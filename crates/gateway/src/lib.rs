//! The model gateway: an HTTP endpoint an agent uses as its provider's base URL, so that the
//! agent holds only a placeholder key, random per round and worthless anywhere else.
//!
//! - [`Grants`] maps each round's placeholder to what the round may do: its provider, the real
//!   upstream, the key file (read when a request needs it, never handed out), its token budget
//!   and the hosts it may reach through the proxy.
//! - `forward`: a request carrying a placeholder (as a bearer token, `x-api-key`,
//!   `x-goog-api-key` or `?key=`) has it replaced by the real key and goes to the upstream over
//!   TLS; the response streams back frame by frame, counted on the way (`metered`, `usage`).
//! - `tunnel`: `CONNECT host:port` for everything else, allowed only for the round's
//!   allow-list and the gateway itself; a refusal is recorded like a request.
//! - `proxy`: `GET http://host/…` sent to the gateway as a proxy (a tool's plain-http
//!   request), allowed, like a tunnel, only for the round's allow-list.
//! - A gateway that serves one round (a sandbox's only way out) may hold a fallback grant
//!   ([`Grants::issue_fallback`]): requests and tunnels without a placeholder fall under it,
//!   and a model request under it goes upstream with the agent's own credentials.
//! - [`Gateway`] listens on loopback TCP and/or a unix socket, bounded in connections, time to
//!   send headers and request size; every request ends as one [`RequestRecord`] handed to the
//!   embedder's sink.

mod body;
mod credentials;
mod error;
mod forward;
mod grants;
mod metered;
mod pool;
mod proxy;
mod record;
mod server;
mod tls;
mod tunnel;
mod upstream;
mod usage;

pub use error::GatewayError;
pub use grants::{Grant, Grants, HostPort, Spend};
pub use record::{RecordSink, RequestRecord};
pub use server::{Gateway, GatewayConfig, Limits};
pub use tls::TlsRoots;
pub use upstream::Upstream;
pub use usage::Tokens;
