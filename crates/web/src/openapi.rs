//! The API's OpenAPI description, generated from the handlers' own annotations (utoipa), whose
//! paths the router serves them at (utoipa-axum), so it cannot drift from the routes; served
//! at `/api/openapi.json` without a token.

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

/// What the description says besides its paths, which each handler's annotation gives (the
/// router takes its path from there too: `server.rs`).
#[derive(OpenApi)]
#[openapi(
    info(title = "ganger", description = "See and steer ganger's tasks: the HTTP API of `ganger serve`."),
    modifiers(&TokenAuth)
)]
pub struct ApiDoc;
