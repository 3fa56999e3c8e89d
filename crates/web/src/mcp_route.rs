//! `/mcp`: the MCP server (`ganger mcp`'s tools) over Streamable HTTP, for a supervisor that is
//! not on this machine. The guard has checked the token; the request goes to the service of
//! the commander it names, so every tool acts as that commander, exactly as `ganger mcp --as`
//! does on stdio. Its tools act, so a read-only token is refused here. A body that is not JSON
//! is answered with JSON-RPC's parse error (-32700); the sessions are kept in bounds
//! (`mcp_sessions.rs`).

use crate::guarded_body::Guarded;
use crate::mcp_sessions::{MAX_SESSIONS, REAP_EVERY, SESSION_IDLE, SessionBook};
use crate::problem::ApiError;
use crate::state::AppState;
use crate::tokens::{Access, Grant};
use axum::Extension;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;
use tower::ServiceExt;

/// The MCP service of one commander and its sessions.
#[derive(Debug)]
pub struct McpEndpoint {
    pub service: ganger_mcp::HttpService,
    pub sessions: Arc<SessionBook>,
}

const SESSION_HEADER: &str = "mcp-session-id";

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
    let Some(endpoint) = state.mcp.get(&grant.commander) else {
        return ApiError::internal(format!("no MCP service for {}", grant.commander))
            .into_response();
    };
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let method = request.method().clone();
    let request = if method == Method::POST {
        match parsed(request).await {
            Ok(request) => request,
            Err(refusal) => return refusal,
        }
    } else {
        request
    };
    if let Some(id) = &session {
        endpoint.sessions.note(id, Instant::now());
    } else if method == Method::POST && endpoint.sessions.count() >= MAX_SESSIONS {
        // A new session: it takes the place of the one unused longest.
        match endpoint.sessions.unused_longest() {
            Some(old) => {
                endpoint.service.close_session(&old).await;
                endpoint.sessions.forget(&old);
            }
            None => {
                return ApiError::unavailable(format!(
                    "{} holds {MAX_SESSIONS} MCP sessions, each in use: end one (DELETE /mcp)",
                    grant.commander
                ))
                .into_response();
            }
        }
    }
    let response = match endpoint.service.service.clone().oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    };
    let opened = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match (&method, session, opened) {
        (&Method::DELETE, Some(id), _) => {
            endpoint.sessions.forget(&id);
            response
        }
        (&Method::GET, Some(id), _) if response.status() == StatusCode::OK => {
            let stream = endpoint.sessions.open_stream(&id);
            response.map(|body| Guarded::wrap(body, stream))
        }
        (_, None, Some(id)) => {
            endpoint.sessions.note(&id, Instant::now());
            response
        }
        _ => response,
    }
}

/// The request again, once its body is known to be JSON; else JSON-RPC's parse error.
async fn parsed(request: Request) -> Result<Request, Response> {
    let (parts, body) = request.into_parts();
    // The body was read whole already (`bounded_body.rs`): this takes it as it is.
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .map_err(|e| ApiError::invalid(format!("cannot read the request: {e}")).into_response())?;
    if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes)
        && matches!(
            error.classify(),
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof
        )
    {
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32700, "message": format!("Parse error: {error}")},
        });
        return Err((
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            message.to_string(),
        )
            .into_response());
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// Ends, every [`REAP_EVERY`], the sessions unused for [`SESSION_IDLE`] (a client that went
/// away without `DELETE /mcp`), and forgets those the service ended itself.
pub async fn reap_sessions(state: Arc<AppState>) {
    loop {
        tokio::time::sleep(REAP_EVERY).await;
        for endpoint in state.mcp.values() {
            for id in endpoint.sessions.unused(Instant::now(), SESSION_IDLE) {
                endpoint.service.close_session(&id).await;
                endpoint.sessions.forget(&id);
            }
            for id in endpoint.sessions.ids() {
                if !endpoint.service.has_session(&id).await {
                    endpoint.sessions.forget(&id);
                }
            }
        }
    }
}
