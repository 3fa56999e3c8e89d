//! What the API answers when a request fails: `ganger.error/1` as the CLI prints it with
//! `--json` (the same kind, message, hint and causes, and the exit code the CLI would give),
//! with an HTTP status that says the same: 400 for bad input, 404 for what does not exist (a
//! task, a round, a fleet, a path), 401 without a token, 403 for a token that may not do this,
//! a commander acting on a task it may not act on, or a foreign origin, 405 for a method a
//! path does not take, 408 and 413 for a body too slow or too large, 500 when the
//! environment failed, 503 when the server holds all it may.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ganger_engine::{EngineError, ErrorKind, Refusal};
use serde::Serialize;

/// A failed request.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub kind: &'static str,
    pub message: String,
    pub hint: Option<String>,
    pub causes: Vec<String>,
    pub exit_code: u8,
}

/// `ganger.error/1`.
#[derive(Serialize)]
struct ErrorDocument<'a> {
    schema: &'static str,
    kind: &'a str,
    error: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    causes: &'a [String],
    hint: Option<&'a str>,
    exit_code: u8,
}

impl ApiError {
    fn of(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
            hint: None,
            causes: Vec::new(),
            exit_code: 2,
        }
    }

    /// Bad input the asker can correct.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::BAD_REQUEST, "invalid", message)
    }

    /// No such task (or round).
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::NOT_FOUND, "not-found", message)
    }

    /// No token, or one that is not known.
    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// A token that may not do this, or a request from another origin.
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// A method the path does not take.
    pub fn method_not_allowed(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::METHOD_NOT_ALLOWED, "invalid", message)
    }

    /// A body that did not arrive in time.
    pub fn timeout(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::REQUEST_TIMEOUT, "invalid", message)
    }

    /// A body larger than the server takes.
    pub fn too_large(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::PAYLOAD_TOO_LARGE, "invalid", message)
    }

    /// The server holds as much as it may (connections, sessions): try again later.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        let mut error = ApiError::of(StatusCode::SERVICE_UNAVAILABLE, "environment", message);
        error.exit_code = ErrorKind::Environment.exit_code();
        error
    }

    /// The server failed (a worker thread that died).
    pub fn internal(message: impl Into<String>) -> ApiError {
        let mut error = ApiError::of(StatusCode::INTERNAL_SERVER_ERROR, "environment", message);
        error.exit_code = ErrorKind::Environment.exit_code();
        error
    }

    /// The same error with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> ApiError {
        self.hint = Some(hint.into());
        self
    }
}

impl From<EngineError> for ApiError {
    fn from(error: EngineError) -> ApiError {
        let status = match (error.kind, error.refusal) {
            (ErrorKind::Invalid, Some(Refusal::NotFound)) => StatusCode::NOT_FOUND,
            (ErrorKind::Invalid, Some(Refusal::NotPermitted)) => StatusCode::FORBIDDEN,
            (ErrorKind::Invalid, None) => StatusCode::BAD_REQUEST,
            (ErrorKind::ModelUnavailable, _) => StatusCode::SERVICE_UNAVAILABLE,
            (ErrorKind::WaitTimeout, _) => StatusCode::GATEWAY_TIMEOUT,
            (ErrorKind::RoundFailed, _) => StatusCode::UNPROCESSABLE_ENTITY,
            (ErrorKind::Environment, _) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let mut causes = Vec::new();
        let mut cause: Option<&(dyn std::error::Error + 'static)> = error
            .cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static));
        while let Some(c) = cause {
            causes.push(c.to_string());
            cause = c.source();
        }
        // A refusal of what does not exist, or of what the commander may not do, has the kind
        // every 404 and 403 of the API has; the exit code stays the CLI's.
        let kind = match status {
            StatusCode::NOT_FOUND => "not-found",
            StatusCode::FORBIDDEN => "forbidden",
            _ => error.kind.as_str(),
        };
        ApiError {
            status,
            kind,
            message: error.message,
            hint: error.hint,
            causes,
            exit_code: error.kind.exit_code(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let document = ErrorDocument {
            schema: "ganger.error/1",
            kind: self.kind,
            error: &self.message,
            causes: &self.causes,
            hint: self.hint.as_deref(),
            exit_code: self.exit_code,
        };
        (self.status, axum::Json(document)).into_response()
    }
}

/// The result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
