//! OpenAI-shaped error bodies: `{"error":{"message","type","param","code"}}`, shared by
//! chat completions and Responses.

use serde_json::{Value, json};

/// The error body OpenAI sends with `status`.
pub(crate) fn error_body(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        400 => ("invalid_request_error", Value::Null),
        401 => ("invalid_request_error", json!("invalid_api_key")),
        404 => ("invalid_request_error", json!("not_found")),
        429 => ("requests", json!("rate_limit_exceeded")),
        _ => ("server_error", Value::Null),
    };
    json!({
        "error": {
            "message": message,
            "type": kind,
            "param": null,
            "code": code,
        }
    })
}
