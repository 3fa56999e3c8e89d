//! The extractors of the API's handlers: the path and query (axum's own, whose refusals, a
//! round that is not a number or a query that does not parse, answer `ganger.error/1` like
//! every other refusal instead of axum's plain text), and the engine that acts as the
//! request's commander ([`Acting`]).

use crate::problem::{ApiError, ApiResult};
use crate::state::AppState;
use crate::tokens::Grant;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use ganger_engine::{Engine, EngineError};
use serde::de::DeserializeOwned;
use std::sync::Arc;

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

/// The engine acting as the request's commander: the one its token names (the guard put the
/// token's grant on the request). Engine calls block, so [`Acting::run`] runs them on tokio's
/// blocking threads.
#[derive(Debug)]
pub struct Acting(pub Arc<Engine>);

impl FromRequestParts<Arc<AppState>> for Acting {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let grant = parts
            .extensions
            .get::<Grant>()
            .ok_or_else(|| ApiError::unauthorized("this request carries no token"))?;
        state.engine_for(grant).map(Acting)
    }
}

impl Acting {
    /// Runs `call` with the engine, off the async threads.
    pub async fn run<T: Send + 'static>(
        self,
        call: impl FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    ) -> ApiResult<T> {
        crate::state::blocking(self.0, call).await
    }

    /// The same, answered as JSON.
    pub async fn json<T: serde::Serialize + Send + 'static>(
        self,
        call: impl FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    ) -> ApiResult<axum::Json<T>> {
        self.run(call).await.map(axum::Json)
    }
}
