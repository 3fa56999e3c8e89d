//! Turning a scripted fault into what the agent sees on the wire.

use axum::response::Response;

use super::wire_response;
use crate::conversation::Answer;
use crate::fault::{Fault, FaultSpec};
use crate::protocol::{RenderContext, WireBody, WireProtocol};

/// The text a cut answer starts with before the connection closes.
const CUT_TEXT: &str = "fake-llm: this answer is cut off before it ends, on purpose.";

/// Answers with `spec`'s fault. A hang never returns: the connection stays open until the
/// client gives up or the server stops.
pub(super) async fn respond(
    spec: FaultSpec,
    protocol: &dyn WireProtocol,
    context: RenderContext<'_>,
) -> Response {
    match spec.fault {
        Fault::Http401 | Fault::Http429 | Fault::Http500 => {
            let status = spec.fault.http_status().unwrap_or(500);
            let message = format!("fake-llm: scripted fault {} (HTTP {status})", spec.fault);
            let headers = retry_headers(spec.retry_after_ms);
            let body = WireBody::Json(protocol.error_body(status, &message));
            wire_response::full(status, &headers, body)
        }
        Fault::Hang => std::future::pending().await,
        Fault::Cut => wire_response::cut(protocol.render(&cut_answer(), context)),
        Fault::Garbage => wire_response::garbage(protocol.render(&cut_answer(), context)),
    }
}

/// The answer a cut or garbled response starts from.
fn cut_answer() -> Answer {
    Answer::Text {
        text: CUT_TEXT.to_owned(),
    }
}

/// `retry-after-ms: N` and `retry-after: ceil(N/1000)` (seconds), as OpenAI sends them.
fn retry_headers(retry_after_ms: Option<u64>) -> Vec<(&'static str, String)> {
    match retry_after_ms {
        Some(millis) => vec![
            ("retry-after-ms", millis.to_string()),
            ("retry-after", millis.div_ceil(1000).to_string()),
        ],
        None => Vec::new(),
    }
}
