//! Google-shaped error bodies: `{"error":{"code","message","status"}}`, with the canonical
//! status names Google's APIs pair with each HTTP status.

use serde_json::{Value, json};

/// The error body the Gemini API sends with `status`.
pub(super) fn error_body(status: u16, message: &str) -> Value {
    json!({
        "error": {
            "code": status,
            "message": message,
            "status": status_name(status),
        }
    })
}

/// Google's canonical status name for an HTTP status.
fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ if status >= 500 => "INTERNAL",
        _ => "UNKNOWN",
    }
}
