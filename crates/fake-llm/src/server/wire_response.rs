//! Putting a protocol's [`WireBody`] on the wire: whole, cut off halfway, or replaced by
//! garbage.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;
use futures_util::stream;

use crate::protocol::{SseEvent, WireBody};

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
            (JSON, first_half(&text).to_owned(), Some(text.len()))
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

/// A 200 whose body is not valid JSON, shaped after what the protocol would have sent: for a
/// stream, the first event with its JSON cut in half and the same event with plain words (so
/// named-event protocols see their own event name), then the end of the body without the
/// finishing events; for JSON, a line of words with a brace.
pub(super) fn garbage(body: WireBody) -> Response {
    let (content_type, text) = match body {
        WireBody::Sse(events) => {
            let first = events
                .into_iter()
                .next()
                .unwrap_or_else(|| SseEvent::data("{}"));
            let truncated = SseEvent {
                event: first.event.clone(),
                data: first_half(&first.data).to_owned(),
            };
            let words = SseEvent {
                event: first.event,
                data: "fake-llm garbage, not JSON at all".to_owned(),
            };
            (EVENT_STREAM, truncated.to_wire() + &words.to_wire())
        }
        WireBody::Json(_) => (JSON, "fake-llm garbage: {this is not JSON".to_owned()),
    };
    let mut response = Response::new(Body::from(text));
    set_content_type(&mut response, content_type);
    response
}

/// The first half of `text`, cut on a character boundary.
fn first_half(text: &str) -> &str {
    let cut_at = (0..=text.len() / 2)
        .rev()
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(0);
    &text[..cut_at]
}

fn set_content_type(response: &mut Response, content_type: &'static str) {
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    if content_type == EVENT_STREAM {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
}
