//! `/mcp`: the MCP server (`ganger mcp`'s tools) over Streamable HTTP, for a supervisor that is
//! not on this machine. The guard has checked the token; the request goes to the service of
//! the commander it names, so every tool acts as that commander, exactly as `ganger mcp --as`
//! does on stdio. Its tools act, so a read-only token is refused here.

use crate::problem::ApiError;
use crate::state::AppState;
use crate::tokens::{Access, Grant};
use axum::Extension;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use tower::ServiceExt;

pub async fn mcp(
    State(state): State<Arc<AppState>>,
    Extension(grant): Extension<Grant>,
    request: Request,
) -> Response {
    if grant.access != Access::Write {
        return ApiError::forbidden(format!(
            "{} holds a read-only token: the MCP tools act, so /mcp needs a token with write access",
            grant.commander
        ))
        .into_response();
    }
    let Some(service) = state.mcp.get(&grant.commander).cloned() else {
        return ApiError::internal(format!("no MCP service for {}", grant.commander))
            .into_response();
    };
    match service.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}
