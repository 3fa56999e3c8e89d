//! The path and query extractors of the API's handlers: axum's own, whose refusals (a round
//! that is not a number, a query that does not parse) answer `ganger.error/1` like every other
//! refusal instead of axum's plain text.

use crate::problem::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// The path's parameters.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

/// The query string.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| ApiPath(value))
            .map_err(|rejection| ApiError::invalid(rejection.body_text()))
    }
}

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| ApiQuery(value))
            .map_err(|rejection| ApiError::invalid(rejection.body_text()))
    }
}
