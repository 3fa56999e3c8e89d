//! The API's races (docs/races.md): `POST /api/races` runs one (or resumes it) as the token's
//! commander until it has ended, as `approve` runs a pipeline's rounds, and answers
//! `ganger.race/1`, or with `"detach": true` records it, leaves it to a detached driver (as
//! `ganger race --detach`) and answers its report as it stands (`"queue": true` queues the
//! attempts for the scheduler, as `--queue`); `GET /api/races/{slug}` is its report.

use crate::extract::{Acting, ApiPath};
use crate::problem::ApiResult;
use crate::routes_actions::body;
use axum::Json;
use axum::body::Bytes;
use ganger_engine::race::{Driving, RaceOptions, RaceReport};
use ganger_engine::{Brief, Budget, EngineError, StartOptions};
use serde::Deserialize;

/// `POST /api/races`: a race.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RaceBody {
    /// The race's name; its attempts are the tasks SLUG.1..SLUG.N.
    pub slug: String,
    /// The brief every attempt gets.
    pub message: String,
    /// The attempts: `AGENT[:MODEL][*COUNT]`, comma separated.
    pub attempts: String,
    /// The first attempt whose checks pass wins at once; the others are cancelled.
    #[serde(default)]
    pub first_green: bool,
    /// One-off checks (shell commands) run after each round.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Fix rounds each attempt gets while its checks fail.
    pub until_green: Option<u32>,
    /// At most this many attempts working at once (default: all).
    pub max: Option<u32>,
    /// The whole race's budget in US dollars.
    pub budget_usd: Option<f64>,
    /// The whole race's budget in tokens.
    pub budget_tokens: Option<u64>,
    /// Record the race and drive it in the background: the answer is its report at once,
    /// `running` (bad input is still refused with nothing made).
    #[serde(default)]
    pub detach: bool,
    /// Queue the attempts and the judges' rounds for the scheduler (`ganger serve`) to start
    /// under its limits, as `ganger race --queue`; takes no `max` or `until_green`.
    #[serde(default)]
    pub queue: bool,
}

#[utoipa::path(post, path = "/api/races", tag = "actions", request_body = RaceBody,
    responses((status = 200, description = "ganger.race/1, once the race has ended (won or failed), or at once with `detach`"),
        (status = 400, description = "bad input (ganger.error/1); nothing was made"),
        (status = 409, description = "the slug is a task's, or a race's with other attempts")),
    security(("token" = [])))]
pub async fn race(acting: Acting, bytes: Bytes) -> ApiResult<Json<RaceReport>> {
    let request: RaceBody = body(&bytes)?;
    let driving = Driving {
        detach: request.detach,
        queue: request.queue,
    };
    let options = RaceOptions {
        slug: request.slug.clone(),
        brief: Some(Brief::Message(request.message)),
        attempts: request.attempts,
        first_green: request.first_green,
        max: request.max,
        start: StartOptions {
            slug: request.slug,
            checks: request.checks,
            until_green: request.until_green,
            budget: Budget {
                usd: request.budget_usd,
                tokens: request.budget_tokens,
            },
            ..StartOptions::default()
        },
    };
    acting
        .json(move |e| e.race_driven(options, driving, &mut |_| {}))
        .await
}

#[utoipa::path(get, path = "/api/races/{slug}", tag = "read",
    params(("slug" = String, Path, description = "the race")),
    responses((status = 200, description = "ganger.race/1"),
        (status = 404, description = "no such race")),
    security(("token" = [])))]
pub async fn get_race(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<RaceReport>> {
    acting
        .json(move |e| {
            e.race_report(&slug)?
                .ok_or_else(|| EngineError::not_found(format!("no race {slug}")))
        })
        .await
}
