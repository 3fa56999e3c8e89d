//! An answer's body that holds something until it is sent or dropped: a connection's count
//! of requests in flight (`connections.rs`), an MCP session's open stream (`mcp_sessions.rs`).

use axum::body::{Body, Bytes};
use std::pin::Pin;
use std::task::{Context, Poll};

/// `body`, holding `guard` while it lives.
pub struct Guarded<G> {
    body: Body,
    _guard: G,
}

impl<G: Send + Unpin + 'static> Guarded<G> {
    /// `body` as an axum body, holding `guard`.
    pub fn wrap(body: Body, guard: G) -> Body {
        Body::new(Guarded {
            body,
            _guard: guard,
        })
    }
}

impl<G: Unpin> http_body::Body for Guarded<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::Body::size_hint(&self.body)
    }
}
