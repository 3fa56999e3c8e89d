//! What the API answers when a request fails: `ganger.error/1` as the CLI prints it with
//! `--json` (the same kind, message, hint and causes, and the exit code the CLI would give),
//! with an HTTP status that says the same: 400 for bad input, 404 for what does not exist (a
//! task, a round, a fleet, a path), 409 for what is there already or another holds, 401
//! without a token, 403 for a token that may not do this, a commander acting on a task it may
//! not act on, or a foreign origin, 405 for a method a path does not take, 408 and 413 for a
//! body too slow or too large, 500 when the environment failed, 503 when the server holds all
//! it may.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ganger_engine::{EngineError, ErrorDocument, ErrorKind};

/// A failed request: its status and `ganger.error/1`.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub document: ErrorDocument,
}

impl ApiError {
    fn of(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        let code = ErrorKind::Invalid.exit_code();
        ApiError {
            status,
            document: ErrorDocument::new(kind, message, code),
        }
    }

    /// Bad input the asker can correct.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::of(StatusCode::BAD_REQUEST, "invalid", message)
    }

    /// No such path, or file of the page.
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
        ApiError::from(EngineError::environment_message(message))
            .with_status(StatusCode::SERVICE_UNAVAILABLE)
    }

    /// The server failed (a worker thread that died).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::from(EngineError::environment_message(message))
    }

    /// The same error with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> ApiError {
        self.document.hint = Some(hint.into());
        self
    }

    fn with_status(mut self, status: StatusCode) -> ApiError {
        self.status = status;
        self
    }
}

/// The status that answers an engine error of `kind`, and the kind the API names it by when
/// that is not the CLI's: what does not exist, conflicts with what is there, or is not the
/// commander's to do.
fn status_of(kind: ErrorKind) -> (StatusCode, Option<&'static str>) {
    match kind {
        ErrorKind::Invalid => (StatusCode::BAD_REQUEST, None),
        ErrorKind::NotFound => (StatusCode::NOT_FOUND, Some("not-found")),
        ErrorKind::Conflict => (StatusCode::CONFLICT, Some("conflict")),
        ErrorKind::Forbidden => (StatusCode::FORBIDDEN, Some("forbidden")),
        ErrorKind::ModelUnavailable => (StatusCode::SERVICE_UNAVAILABLE, None),
        ErrorKind::WaitTimeout => (StatusCode::GATEWAY_TIMEOUT, None),
        ErrorKind::RoundFailed => (StatusCode::UNPROCESSABLE_ENTITY, None),
        ErrorKind::Environment => (StatusCode::INTERNAL_SERVER_ERROR, None),
    }
}

impl From<EngineError> for ApiError {
    fn from(error: EngineError) -> ApiError {
        let (status, named) = status_of(error.kind);
        let mut document = ErrorDocument::from(&error);
        if let Some(kind) = named {
            document.kind = kind;
        }
        ApiError { status, document }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.document)).into_response()
    }
}

/// The result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
