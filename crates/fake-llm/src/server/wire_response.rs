//! Putting a protocol's [`WireBody`] on the wire: whole, cut off halfway, or replaced by
//! garbage.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;
use futures_util::stream;

use crate::protocol::WireBody;

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// How long a cut response waits after its last chunk before breaking the connection, so the
/// chunks reach the client rather than dying in a buffer.
const CUT_PAUSE: Duration = Duration::from_millis(100);

/// The whole body with `status` and extra `headers`.
pub(super) fn full(status: u16, headers: &[(&'static str, String)], body: WireBody) -> Response {
    let (content_type, bytes) = match body {
        WireBody::Json(value) => (JSON, value.to_string()),
        WireBody::Sse(events) => (
            EVENT_STREAM,
            events.iter().map(|event| event.to_wire()).collect(),
        ),
    };
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    set_content_type(&mut response, content_type);
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(name), value);
        }
    }
    response
}

/// A 200 that sends the first half of the body and then breaks the connection: for a stream,
/// half of the events (at least one, never the final ones); for JSON, half of the bytes under
/// a `content-length` that promises all of them.
pub(super) fn cut(body: WireBody) -> Response {
    let (content_type, sent, promised) = match body {
        WireBody::Sse(events) => {
            let keep = (events.len() / 2).max(1);
            let sent: String = events
                .iter()
                .take(keep)
                .map(|event| event.to_wire())
                .collect();
            (EVENT_STREAM, sent, None)
        }
        WireBody::Json(value) => {
            let text = value.to_string();
            let half = text.len() / 2;
            let cut_at = (0..=half)
                .rev()
                .find(|&at| text.is_char_boundary(at))
                .unwrap_or(0);
            (JSON, text[..cut_at].to_owned(), Some(text.len()))
        }
    };
    let chunks = stream::iter([Ok(Bytes::from(sent))]).chain(stream::once(async {
        tokio::time::sleep(CUT_PAUSE).await;
        Err(std::io::Error::other("fake-llm: connection cut on purpose"))
    }));
    let mut response = Response::new(Body::from_stream(chunks));
    set_content_type(&mut response, content_type);
    if let Some(length) = promised {
        response
            .headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(length));
    }
    response
}

/// A 200 whose body is not valid JSON: for a stream, a `data:` line with a truncated JSON
/// chunk and one with plain words (each under `event: NAME` when `event` is given), then the
/// end of the body without `[DONE]`.
pub(super) fn garbage(stream: bool, event: Option<String>) -> Response {
    let (content_type, text) = if stream {
        let named = event
            .map(|name| format!("event: {name}\n"))
            .unwrap_or_default();
        (
            EVENT_STREAM,
            format!(
                "{named}data: {{\"id\":\"chatcmpl-garbage\",\"choices\":[{{\"delta\":{{\"content\":\"gar\n\n\
                 {named}data: fake-llm garbage, not JSON at all\n\n"
            ),
        )
    } else {
        (JSON, "fake-llm garbage: {this is not JSON".to_owned())
    };
    let mut response = Response::new(Body::from(text));
    set_content_type(&mut response, content_type);
    response
}

fn set_content_type(response: &mut Response, content_type: &'static str) {
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if content_type == EVENT_STREAM {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
}
