//! The body type every response of the gateway has, and its own short answers.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub(crate) type Body = UnsyncBoxBody<Bytes, BoxError>;

/// A body of these bytes.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// The gateway's own refusal, in the error shape the providers share
/// (`{"error":{"message":...}}`), so that an agent prints the reason.
pub(crate) fn refusal(status: StatusCode, message: &str) -> Response<Body> {
    let text = serde_json::json!({
        "error": {"type": "ganger_gateway", "message": format!("ganger gateway: {message}")}
    })
    .to_string();
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
