//! The API's OpenAPI description, generated from the handlers' own annotations (utoipa), so it
//! cannot drift from the routes; served at `/api/openapi.json` without a token.

use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

struct TokenAuth;

impl Modify for TokenAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "the owner's token from .ganger/web/token, or one of .ganger/web/tokens.toml",
                    ))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "ganger", description = "See and steer ganger's tasks: the HTTP API of `ganger serve`."),
    paths(
        crate::routes_read::list_tasks,
        crate::routes_read::get_task,
        crate::routes_read::task_report,
        crate::routes_read::task_checks,
        crate::routes_read::task_diff,
        crate::routes_read::list_rounds,
        crate::routes_read::get_round,
        crate::routes_read::round_events,
        crate::routes_read::round_diff,
        crate::routes_read::all_rounds,
        crate::routes_read::journal,
        crate::routes_read::fleets,
        crate::routes_read::fleet,
        crate::routes_read::queue,
        crate::routes_read::whoami,
        crate::routes_actions::start,
        crate::routes_actions::fix,
        crate::routes_actions::cancel,
        crate::routes_actions::approve,
        crate::routes_actions::reject,
        crate::routes_actions::merge,
        crate::routes_actions::transfer,
        crate::events_board::board_events,
        crate::events_task::task_events,
    ),
    modifiers(&TokenAuth)
)]
pub struct ApiDoc;

/// `GET /api/openapi.json`.
pub async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
