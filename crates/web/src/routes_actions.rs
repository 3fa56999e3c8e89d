//! The API's actions: start, fix (with interrupt), cancel, approve, reject, merge, transfer.
//! Each acts as the token's commander, through the same engine calls as the CLI, so the same
//! rules hold (ownership, a busy task, a task holding new rounds) with the same messages.
//! Rounds run in detached hosts: a request returns once its round is recorded as running, or
//! queued for the scheduler (`"queue": true`).
//! A body is read strictly (an unknown field is bad input), before anything is done.

use crate::extract::{Acting, ApiPath};
use crate::problem::{ApiError, ApiResult};
use axum::Json;
use axum::body::Bytes;
use ganger_engine::documents::SentDocument;
use ganger_engine::{
    Brief, FixOptions, MergeMode, MergeOptions, MergeReport, OwnershipAction, OwnershipReport,
    PipelineReport, RoundReport, StartOptions,
};
use serde::Deserialize;

/// A request body, read strictly; an empty body reads as `{}`.
pub(crate) fn body<T: serde::de::DeserializeOwned>(bytes: &Bytes) -> ApiResult<T> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::invalid(format!(
            "the request body is not what this action takes: {e}"
        ))
    })
}

/// `POST /api/tasks`: a new task.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartBody {
    /// The task's name.
    pub slug: String,
    /// The brief: round 1's prompt.
    pub message: String,
    pub agent: Option<String>,
    pub model: Option<String>,
    /// The base revision (default `main`).
    pub base: Option<String>,
    /// `KEY=VALUE` labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// One-off checks (shell commands) run after each round.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Queue the start for the scheduler instead of starting now.
    #[serde(default)]
    pub queue: bool,
}

/// `POST /api/tasks/{slug}/fix`: the next round.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FixBody {
    /// The round's prompt.
    pub message: String,
    /// Stop a running round first and send this one into the same session.
    #[serde(default)]
    pub interrupt: bool,
    pub model: Option<String>,
    #[serde(default)]
    pub queue: bool,
}

/// `POST /api/tasks/{slug}/reject`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectBody {
    /// What the planner is to change.
    pub notes: String,
}

/// `POST /api/tasks/{slug}/merge`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeBody {
    /// `merge` (default), `squash` or `rebase`.
    pub mode: Option<String>,
}

/// `POST /api/tasks/{slug}/transfer`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferBody {
    /// The commander who owns the task next.
    pub to: String,
}

#[utoipa::path(post, path = "/api/tasks", tag = "actions", request_body = StartBody,
    responses((status = 200, description = "ganger.detached/1 (round 1 runs) or ganger.queued/1"),
        (status = 400, description = "bad input (ganger.error/1); nothing was made"),
        (status = 409, description = "a task of that name exists, or its start is queued already")),
    security(("token" = [])))]
pub async fn start(acting: Acting, bytes: Bytes) -> ApiResult<Json<SentDocument>> {
    let request: StartBody = body(&bytes)?;
    let options = StartOptions {
        slug: request.slug,
        brief: Some(Brief::Message(request.message)),
        agent: request.agent,
        model: request.model,
        base: request.base,
        labels: request.labels,
        checks: request.checks,
        // A queued round runs detached anyway: the queue takes no detach of its own.
        detach: !request.queue,
        ..StartOptions::default()
    };
    let queue = request.queue;
    acting
        .json(move |e| Ok(e.sent_document(e.start(options, queue, &mut |_| {})?)))
        .await
}

#[utoipa::path(post, path = "/api/tasks/{slug}/fix", tag = "actions", request_body = FixBody,
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.detached/1 or ganger.queued/1"),
        (status = 400, description = "refused (ganger.error/1): busy, bad input"),
        (status = 403, description = "not the task's owner"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn fix(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
    bytes: Bytes,
) -> ApiResult<Json<SentDocument>> {
    let request: FixBody = body(&bytes)?;
    let options = FixOptions {
        slug,
        brief: Some(Brief::Message(request.message)),
        model: request.model,
        interrupt: request.interrupt,
        detach: !request.queue,
        ..FixOptions::default()
    };
    let queue = request.queue;
    acting
        .json(move |e| Ok(e.sent_document(e.fix(options, queue, &mut |_| {})?)))
        .await
}

#[utoipa::path(post, path = "/api/tasks/{slug}/cancel", tag = "actions",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.round-report/1 of the stopped round"),
        (status = 400, description = "refused (ganger.error/1)"),
        (status = 403, description = "not the task's owner"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn cancel(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<RoundReport>> {
    acting
        .json(move |e| e.cancel(&slug, None, &mut |_| {}))
        .await
}

#[utoipa::path(post, path = "/api/tasks/{slug}/approve", tag = "actions",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.pipeline/1"),
        (status = 400, description = "refused (ganger.error/1)"),
        (status = 403, description = "not the task's owner"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn approve(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<PipelineReport>> {
    acting
        .json(move |e| e.approve(&slug, None, &mut |_| {}))
        .await
}

#[utoipa::path(post, path = "/api/tasks/{slug}/reject", tag = "actions", request_body = RejectBody,
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.pipeline/1"),
        (status = 400, description = "refused (ganger.error/1)"),
        (status = 403, description = "not the task's owner"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn reject(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
    bytes: Bytes,
) -> ApiResult<Json<PipelineReport>> {
    let notes = Brief::Message(body::<RejectBody>(&bytes)?.notes);
    acting
        .json(move |e| e.reject(&slug, &notes, None, &mut |_| {}))
        .await
}

#[utoipa::path(post, path = "/api/tasks/{slug}/merge", tag = "actions", request_body = MergeBody,
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.merge/1"),
        (status = 400, description = "refused (ganger.error/1)"),
        (status = 403, description = "not the task's owner"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn merge(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
    bytes: Bytes,
) -> ApiResult<Json<MergeReport>> {
    let request: MergeBody = body(&bytes)?;
    let mode = request
        .mode
        .as_deref()
        .map(str::parse::<MergeMode>)
        .transpose()
        .map_err(ApiError::invalid)?
        .unwrap_or_default();
    let options = MergeOptions {
        slug,
        mode,
        ..MergeOptions::default()
    };
    acting.json(move |e| e.merge(options, &mut |_| {})).await
}

#[utoipa::path(post, path = "/api/tasks/{slug}/transfer", tag = "actions", request_body = TransferBody,
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.ownership/1"),
        (status = 400, description = "refused (ganger.error/1)"),
        (status = 403, description = "not the task's owner"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn transfer(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
    bytes: Bytes,
) -> ApiResult<Json<OwnershipReport>> {
    let action = OwnershipAction::Transfer {
        to: body::<TransferBody>(&bytes)?.to,
    };
    acting
        .json(move |e| e.ownership(&slug, &action, None, &mut |_| {}))
        .await
}
