//! `GET /_fake/requests`: the recorded requests as a JSON array, for a person running
//! `ganger fake-llm` to see what an agent sent; `GET /_fake/in-flight`: model requests in
//! flight per model, now and at most. Inspection requests are not recorded.

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
        (&Method::GET, "/_fake/in-flight") => Json(shared.in_flight.snapshot()).into_response(),
        _ => (
            StatusCode::NOT_FOUND,
            "fake-llm: the inspection endpoints are GET /_fake/requests and GET /_fake/in-flight\n",
        )
            .into_response(),
    })
}
