//! The API's merge queue (docs/land.md): `POST /api/land` queues tasks to land as the token's
//! commander (`ganger land SLUG...`: its owner, or a commander the owner allows) and answers
//! `ganger.land/1`; `GET /api/land` is the queue as `ganger land status --json` prints it; and
//! `GET /api/conflicts` the conflicts the rounds' ends predicted between open tasks.

use crate::extract::Acting;
use crate::problem::{ApiError, ApiResult};
use crate::routes_actions::body;
use axum::Json;
use axum::body::Bytes;
use ganger_engine::documents::WebConflicts;
use ganger_engine::{LandOptions, LandReport, LandStatus};
use serde::Deserialize;

/// `POST /api/land`: tasks to queue.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LandBody {
    /// The tasks to land on their base branches, each once its last round passed its checks.
    pub tasks: Vec<String>,
    /// A task a batch sends back goes to its worker as a fix round, and is queued again once
    /// that round passes.
    #[serde(default)]
    pub fix: bool,
    /// Queued ahead of lower priorities (0 by default).
    #[serde(default)]
    pub priority: i64,
}

#[utoipa::path(post, path = "/api/land", tag = "actions", request_body = LandBody,
    responses((status = 200, description = "ganger.land/1: the tasks queued (a lander lands them: `ganger land --run`)"),
        (status = 400, description = "bad input (ganger.error/1): a task whose checks did not pass, one named twice or already queued, a base missing or dirty; nothing was queued"),
        (status = 403, description = "a read-only token, or a task the token's commander may not land"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn land(acting: Acting, bytes: Bytes) -> ApiResult<Json<LandReport>> {
    let request: LandBody = body(&bytes)?;
    if request.tasks.is_empty() {
        return Err(ApiError::invalid("the request names no task to land"));
    }
    let options = LandOptions {
        slugs: request.tasks,
        run: false,
        batch: None,
        priority: request.priority,
        fix: request.fix,
        commander: None,
    };
    acting.json(move |e| e.land(options, &mut |_| {})).await
}

#[utoipa::path(get, path = "/api/land", tag = "read",
    responses((status = 200, description = "ganger.land-status/1: the queue, the batches under test with their bisection so far, the last batches, flaky checks, the tasks sent back and why")),
    security(("token" = [])))]
pub async fn land_status(acting: Acting) -> ApiResult<Json<LandStatus>> {
    acting.json(|e| e.land_status()).await
}

#[utoipa::path(get, path = "/api/conflicts", tag = "read",
    responses((status = 200, description = "ganger.web-conflicts/1: the open tasks whose work conflicts (with another's, or with their base's head), with the files and lines")),
    security(("token" = [])))]
pub async fn conflicts(acting: Acting) -> ApiResult<Json<WebConflicts>> {
    acting.json(|e| e.web_conflicts()).await
}
