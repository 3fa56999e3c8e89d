//! One line per request through the gateway, handed to the embedder: which round, where it
//! went, what came back, how long it took and what it cost. A record never holds a key or a
//! placeholder (the path is kept without its query, where Gemini's key travels).

use crate::usage::Tokens;
use std::sync::Arc;

/// What one request (or one `CONNECT`) did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RequestRecord {
    /// The round's name from its grant; none when no grant was found.
    pub round: Option<String>,
    pub provider: Option<String>,
    /// `model` for a model request, `connect` for a tunnel.
    pub kind: &'static str,
    pub method: String,
    /// The upstream's or the tunnel's `host:port`.
    pub host: String,
    /// The request's path, without its query.
    pub path: String,
    /// The model named in the request's body or path, when one is.
    pub model: Option<String>,
    /// The status the agent got (the gateway's own when it refused).
    pub status: u16,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Milliseconds from the request's arrival to the response's headers.
    pub headers_ms: f64,
    /// Milliseconds from the request's arrival to the body's end (or the client's leaving).
    pub total_ms: f64,
    pub tokens: Tokens,
    /// Why the gateway refused, when it did (nothing was sent upstream).
    pub refused: Option<String>,
    /// What the upstream asked to wait on a 429 or 503 (`retry-after-ms`, else `retry-after`
    /// in seconds), in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// Whether the client left before the body ended.
    pub cut: bool,
}

impl RequestRecord {
    /// A record of a request just arrived: nothing known of its round or its outcome yet.
    pub(crate) fn arrived(
        kind: &'static str,
        method: String,
        host: String,
        path: String,
    ) -> RequestRecord {
        RequestRecord {
            round: None,
            provider: None,
            kind,
            method,
            host,
            path,
            model: None,
            status: 0,
            bytes_up: 0,
            bytes_down: 0,
            headers_ms: 0.0,
            total_ms: 0.0,
            tokens: Tokens::default(),
            refused: None,
            retry_after_ms: None,
            cut: false,
        }
    }
}

/// Where records go: the embedder's journal, a log, a test's list.
pub type RecordSink = Arc<dyn Fn(RequestRecord) + Send + Sync>;
