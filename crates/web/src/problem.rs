//! What the API answers when a request fails: `ganger.error/1` as the CLI prints it with
//! `--json` (the same kind, message, hint and causes, and the exit code the CLI would give),
//! with an HTTP status that says the same: 400 for bad input, 404 for a task that does not
//! exist, 401 without a token, 403 for a token that may not do this or a foreign origin, 500
//! when the environment failed.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ganger_engine::{EngineError, ErrorKind};
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
        let status = match error.kind {
            ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            ErrorKind::ModelUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorKind::WaitTimeout => StatusCode::GATEWAY_TIMEOUT,
            ErrorKind::RoundFailed => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorKind::Environment => StatusCode::INTERNAL_SERVER_ERROR,
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
        ApiError {
            status,
            kind: error.kind.as_str(),
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
