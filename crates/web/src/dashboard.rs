//! The dashboard's files, compiled into the binary from `crates/web/assets/` (committed
//! sources, no build step, nothing fetched at run time), so `cargo install` needs no Node.
//! See docs/design.md ("The dashboard") for why the page is shaped so.

use crate::extract::ApiPath;
use crate::problem::ApiError;
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// A file of the page: its name, type and text.
const FILES: [(&str, &str, &str); 8] = [
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../assets/style.css"),
    ),
    (
        "preact-htm.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/vendor/preact-htm.js"),
    ),
    (
        "task_view.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/task_view.js"),
    ),
    (
        "views.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/views.js"),
    ),
    (
        "race_view.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/race_view.js"),
    ),
    (
        "land_view.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/land_view.js"),
    ),
    (
        "highlight.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/vendor/highlight.js"),
    ),
];

/// The policy every page answer carries: its own scripts and styles only, API calls to this
/// server only, no frames.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn page_file(content_type: &'static str, text: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        text,
    )
        .into_response()
}

/// `GET /`: the page.
pub async fn index() -> Response {
    page_file(
        "text/html; charset=utf-8",
        include_str!("../assets/index.html"),
    )
}

/// `GET /assets/{name}`.
pub async fn asset(ApiPath(name): ApiPath<String>) -> Response {
    match FILES.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, text)) => page_file(content_type, text),
        None => ApiError::not_found(format!("the page has no file {name}")).into_response(),
    }
}
