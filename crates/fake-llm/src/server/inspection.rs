//! `GET /_fake/requests`: the recorded requests as a JSON array, for a person running
//! `ganger fake-llm` to see what an agent sent. Inspection requests are not recorded.

use axum::Json;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::Shared;

/// The path prefix of the server's own endpoints.
const PREFIX: &str = "/_fake/";

/// The answer to an inspection request, or `None` when `uri` is not one.
pub(super) fn answer(shared: &Shared, method: &Method, uri: &Uri) -> Option<Response> {
    let path = uri.path();
    if !path.starts_with(PREFIX) {
        return None;
    }
    Some(match (method, path) {
        (&Method::GET, "/_fake/requests") => Json(shared.requests()).into_response(),
        _ => (
            StatusCode::NOT_FOUND,
            "fake-llm: the only inspection endpoint is GET /_fake/requests\n",
        )
            .into_response(),
    })
}
