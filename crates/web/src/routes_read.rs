//! The API's reads: the task table (filtered), a task with its rounds, a round's report,
//! prompt, events and diff, the task's diff and checks, the journal, fleets, the queue and the
//! workers.
//! Each answer is the engine's own document as it is (docs/json.md), or a patch as text; what
//! does not exist is the engine's `NotFound`, a 404.

use crate::extract::{Acting, ApiPath, ApiQuery};
use crate::problem::{ApiError, ApiResult};
use crate::tokens::Grant;
use axum::Extension;
use axum::Json;
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use ganger_engine::documents::{
    RoundHistory, WebChecks, WebFleets, WebJournal, WebTask, WebTasks, Workers,
};
use ganger_engine::fleet::FleetStatus;
use ganger_engine::{BoardTask, DiffStream, StatusRequest, StatusView};
use serde::Deserialize;
use serde_json::{Value, json};

/// Which tasks `GET /api/tasks` lists.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct TaskFilter {
    /// The last round's status (`running`, `done`, `failed`, ...), or `none` for no round yet.
    pub status: Option<String>,
    /// `KEY=VALUE`: tasks with that label.
    pub label: Option<String>,
    /// The owning commander.
    pub owner: Option<String>,
    /// The fleet the task belongs to.
    pub fleet: Option<String>,
}

impl TaskFilter {
    fn check(&self) -> ApiResult<Option<(String, String)>> {
        let label = match &self.label {
            Some(text) => {
                let (key, value) = text.split_once('=').ok_or_else(|| {
                    ApiError::invalid(format!("label {text:?}: expected KEY=VALUE"))
                })?;
                Some((key.to_owned(), value.to_owned()))
            }
            None => None,
        };
        Ok(label)
    }

    fn admits(&self, task: &BoardTask, label: Option<&(String, String)>) -> bool {
        let status = ganger_engine::documents::status_name(task);
        self.status.as_ref().is_none_or(|s| *s == status)
            && self.owner.as_ref().is_none_or(|o| *o == task.owner)
            && self
                .fleet
                .as_ref()
                .is_none_or(|f| Some(f) == task.fleet.as_ref())
            && label.is_none_or(|(k, v)| task.labels.get(k) == Some(v))
    }
}

#[utoipa::path(get, path = "/api/tasks", tag = "tasks", params(TaskFilter),
    responses((status = 200, description = "ganger.web-tasks/1: the task table"),
        (status = 400, description = "a bad filter (ganger.error/1)")),
    security(("token" = [])))]
pub async fn list_tasks(
    acting: Acting,
    ApiQuery(filter): ApiQuery<TaskFilter>,
) -> ApiResult<Json<WebTasks>> {
    let label = filter.check()?;
    let tasks = acting.run(|e| e.board_tasks()).await?;
    let tasks = tasks
        .into_iter()
        .filter(|t| filter.admits(t, label.as_ref()))
        .collect();
    Ok(Json(WebTasks::new(tasks)))
}

#[utoipa::path(get, path = "/api/tasks/{slug}", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.web-task/1: the task's row and every round's report"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn get_task(acting: Acting, ApiPath(slug): ApiPath<String>) -> ApiResult<Json<WebTask>> {
    acting.json(move |e| e.web_task(&slug)).await
}

#[utoipa::path(get, path = "/api/tasks/{slug}/report", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.round-report/1 of the last round, or ganger.pipeline/1"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_report(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<StatusView>> {
    let request = StatusRequest {
        slug: Some(slug),
        tree: false,
    };
    acting.json(move |e| e.status(&request, &mut |_| {})).await
}

#[utoipa::path(get, path = "/api/tasks/{slug}/checks", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.web-checks/1: the last round's checks with their output's tail"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_checks(
    acting: Acting,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<WebChecks>> {
    acting.json(move |e| e.web_checks(&slug)).await
}

#[utoipa::path(get, path = "/api/tasks/{slug}/rounds", tag = "rounds",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "every round's ganger.round-report/1"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn list_rounds(acting: Acting, ApiPath(slug): ApiPath<String>) -> ApiResult<Json<Value>> {
    let rounds = acting.run(move |e| e.round_reports(&slug)).await?;
    Ok(Json(json!({ "rounds": rounds })))
}

#[utoipa::path(get, path = "/api/tasks/{slug}/rounds/{round}", tag = "rounds",
    params(("slug" = String, Path, description = "the task"), ("round" = u32, Path, description = "the round's number")),
    responses((status = 200, description = "the round's report and its prompt as sent"),
        (status = 404, description = "no such task or round")),
    security(("token" = [])))]
pub async fn get_round(
    acting: Acting,
    ApiPath((slug, number)): ApiPath<(String, u32)>,
) -> ApiResult<Json<Value>> {
    let (report, prompt) = acting
        .run(move |e| e.round_with_prompt(&slug, number))
        .await?;
    Ok(Json(json!({ "report": report, "prompt": prompt })))
}

/// From where `GET .../events` reads.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct EventsQuery {
    /// The byte offset of the stream after which lines are wanted (0: all).
    pub after: Option<u64>,
}

#[utoipa::path(get, path = "/api/tasks/{slug}/rounds/{round}/events", tag = "rounds",
    params(("slug" = String, Path, description = "the task"), ("round" = u32, Path, description = "the round's number"), EventsQuery),
    responses((status = 200, description = "the round's lines so far, read through its agent's adapter, and the offset to go on from"),
        (status = 404, description = "no such task or round")),
    security(("token" = [])))]
pub async fn round_events(
    acting: Acting,
    ApiPath((slug, number)): ApiPath<(String, u32)>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> ApiResult<Json<Value>> {
    let after = query.after.unwrap_or(0);
    let (lines, read) = acting
        .run(move |e| {
            let mut feed = e.round_feed(&slug, number, after)?;
            let mut lines = Vec::new();
            let read = feed.poll(e, &mut |line| lines.push(line))?;
            Ok((lines, read))
        })
        .await?;
    Ok(Json(
        json!({ "lines": lines, "offset": read.offset, "running": read.running }),
    ))
}

/// What the stream of a patch does next.
enum Next {
    /// Hand over this piece, then read on.
    Piece(Vec<u8>, DiffStream),
    /// git failed part way: the answer is cut short.
    Failed(std::io::Error),
    Done,
}

/// A patch as git writes it, streamed a piece at a time (each read on the blocking pool): the
/// first piece is read before the answer starts, so that a diff git refuses is an error
/// document; a failure later cuts the answer short.
async fn stream_patch(acting: Acting, slug: String, round: Option<u32>) -> ApiResult<Response> {
    let (stream, first) = acting
        .run(move |e| {
            let mut stream = e.diff_stream(&slug, round, false)?;
            let first = stream.next_chunk()?;
            Ok((stream, first))
        })
        .await?;
    let start = match first {
        Some(piece) => Next::Piece(piece, stream),
        None => Next::Done,
    };
    let pieces = futures_util::stream::unfold(start, |next| async move {
        match next {
            Next::Done => None,
            Next::Failed(error) => Some((Err(error), Next::Done)),
            Next::Piece(piece, mut stream) => {
                let read = tokio::task::spawn_blocking(move || {
                    let next = stream.next_chunk();
                    (stream, next)
                })
                .await;
                let after = match read {
                    Ok((stream, Ok(Some(next)))) => Next::Piece(next, stream),
                    Ok((_, Ok(None))) => Next::Done,
                    Ok((_, Err(error))) => Next::Failed(std::io::Error::other(error.message)),
                    Err(error) => Next::Failed(std::io::Error::other(error.to_string())),
                };
                Some((Ok(Bytes::from(piece)), after))
            }
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "text/x-diff; charset=utf-8")],
        Body::from_stream(pieces),
    )
        .into_response())
}

#[utoipa::path(get, path = "/api/tasks/{slug}/rounds/{round}/diff", tag = "rounds",
    params(("slug" = String, Path, description = "the task"), ("round" = u32, Path, description = "the round's number")),
    responses((status = 200, description = "text/x-diff: what the round changed, from its snapshots"),
        (status = 400, description = "the round has no snapshots"),
        (status = 404, description = "no such task or round")),
    security(("token" = [])))]
pub async fn round_diff(
    acting: Acting,
    ApiPath((slug, number)): ApiPath<(String, u32)>,
) -> ApiResult<Response> {
    stream_patch(acting, slug, Some(number)).await
}

#[utoipa::path(get, path = "/api/tasks/{slug}/diff", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "text/x-diff: the task's changes against its base"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_diff(acting: Acting, ApiPath(slug): ApiPath<String>) -> ApiResult<Response> {
    stream_patch(acting, slug, None).await
}

/// Which journal entries.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
pub struct JournalQuery {
    /// Entries after this one (default 0: from the first).
    pub after: Option<i64>,
    /// At most this many (default and most 1000).
    pub limit: Option<u32>,
}

#[utoipa::path(get, path = "/api/journal", tag = "journal", params(JournalQuery),
    responses((status = 200, description = "journal entries of every commander, oldest first")),
    security(("token" = [])))]
pub async fn journal(
    acting: Acting,
    ApiQuery(query): ApiQuery<JournalQuery>,
) -> ApiResult<Json<WebJournal>> {
    let after = query.after.unwrap_or(0);
    let limit = query.limit.unwrap_or(1000).clamp(1, 1000);
    acting.json(move |e| e.web_journal(after, limit)).await
}

#[utoipa::path(get, path = "/api/fleets", tag = "fleet",
    responses((status = 200, description = "ganger.web-fleets/1: each fleet submitted, its file and limits, and its tasks counted by status")),
    security(("token" = [])))]
pub async fn fleets(acting: Acting) -> ApiResult<Json<WebFleets>> {
    acting.json(|e| e.web_fleets()).await
}

#[utoipa::path(get, path = "/api/fleets/{name}", tag = "fleet",
    params(("name" = String, Path, description = "the fleet")),
    responses((status = 200, description = "ganger.fleet-status/1: the fleet's tasks, what each waits on"),
        (status = 404, description = "no such fleet")),
    security(("token" = [])))]
pub async fn fleet(acting: Acting, ApiPath(name): ApiPath<String>) -> ApiResult<Json<FleetStatus>> {
    acting.json(move |e| e.fleet_status(Some(&name))).await
}

#[utoipa::path(get, path = "/api/queue", tag = "fleet",
    responses((status = 200, description = "ganger.fleet-status/1 of every queued item")),
    security(("token" = [])))]
pub async fn queue(acting: Acting) -> ApiResult<Json<FleetStatus>> {
    acting.json(|e| e.fleet_status(None)).await
}

#[utoipa::path(get, path = "/api/workers", tag = "fleet",
    responses((status = 200, description = "ganger.workers/1: every worker recorded in the store (its host, capacity and load, agents, sandboxes, when last seen) and whether it lives, as `ganger workers --json`")),
    security(("token" = [])))]
pub async fn workers(acting: Acting) -> ApiResult<Json<Workers>> {
    acting.json(|e| e.workers().map(Workers::new)).await
}

#[utoipa::path(get, path = "/api/rounds", tag = "rounds",
    responses((status = 200, description = "ganger.web-rounds/1: every round as a point in time (state, agent, model, cost, tokens, fleet) and the budgets set, for plots")),
    security(("token" = [])))]
pub async fn all_rounds(acting: Acting) -> ApiResult<Json<RoundHistory>> {
    acting.json(|e| e.round_history()).await
}

#[utoipa::path(get, path = "/api/whoami", tag = "auth",
    responses((status = 200, description = "the commander the token acts as, and its access")),
    security(("token" = [])))]
pub async fn whoami(Extension(grant): Extension<Grant>) -> Json<Value> {
    Json(json!({ "commander": grant.commander, "access": grant.access }))
}
