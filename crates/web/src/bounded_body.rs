//! Every request's body is read whole, within [`BODY_LIMIT`] bytes and [`BODY_TIMEOUT`], before
//! a handler sees it: a client that sends a body too large is answered 413 from its declared
//! length without a byte of it read, and one that sends it too slowly is answered 408, each
//! as `ganger.error/1`. A handler (or the MCP service) then reads a body that is all there.

use crate::problem::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// The largest body a request may carry.
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// How long a client has to send a request's whole body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

pub async fn bounded_body(request: Request, next: Next) -> Response {
    match read_body(request).await {
        Ok(request) => next.run(request).await,
        Err(error) => error.into_response(),
    }
}

fn too_large() -> ApiError {
    ApiError::too_large(format!(
        "the request body is larger than {} MB",
        BODY_LIMIT / (1024 * 1024)
    ))
}

async fn read_body(request: Request) -> Result<Request, ApiError> {
    if matches!(*request.method(), Method::GET | Method::HEAD) {
        return Ok(request);
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > BODY_LIMIT as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    let bytes =
        match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, BODY_LIMIT)).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(error)) => {
                let over = std::error::Error::source(&error)
                    .is_some_and(|cause| cause.is::<http_body_util::LengthLimitError>());
                return Err(if over {
                    too_large()
                } else {
                    ApiError::invalid(format!("cannot read the request body: {error}"))
                });
            }
            Err(_) => {
                return Err(ApiError::timeout(format!(
                    "the request body did not arrive within {} s",
                    BODY_TIMEOUT.as_secs()
                )));
            }
        };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}
