//! The API's reads: the task table (filtered), a task with its rounds, a round's report,
//! prompt, events and diff, the task's diff and checks, the journal, fleets and the queue.
//! Each answer is the engine's own value as JSON (the documents of docs/json.md where the CLI
//! prints the same), or a patch as text.

use crate::extract::{ApiPath, ApiQuery};
use crate::problem::{ApiError, ApiResult};
use crate::state::{AppState, blocking};
use crate::tokens::Grant;
use axum::Extension;
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use ganger_engine::{BoardTask, DiffStream, Engine, StatusRequest, StatusView};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// The task, or a 404 (a name that cannot be a task's is a 400).
pub async fn existing_task(engine: &Arc<Engine>, slug: &str) -> ApiResult<ganger_store::Task> {
    let name = slug.to_owned();
    blocking(engine.clone(), move |e| e.find_task(&name))
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!("no task {slug}"))
                .hint("start it with `ganger start`; `ganger status` lists the tasks")
        })
}

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
        let status = task
            .status
            .map(|s| {
                serde_json::to_value(s)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
            })
            .unwrap_or_else(|| Some("none".into()));
        self.status
            .as_ref()
            .is_none_or(|s| Some(s) == status.as_ref())
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
    State(state): State<Arc<AppState>>,
    ApiQuery(filter): ApiQuery<TaskFilter>,
) -> ApiResult<Json<Value>> {
    let label = filter.check()?;
    let tasks = blocking(state.owner.clone(), |e| e.board_tasks()).await?;
    let tasks: Vec<BoardTask> = tasks
        .into_iter()
        .filter(|t| filter.admits(t, label.as_ref()))
        .collect();
    Ok(Json(
        json!({ "schema": "ganger.web-tasks/1", "tasks": tasks }),
    ))
}

#[utoipa::path(get, path = "/api/tasks/{slug}", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.web-task/1: the task's row and every round's report"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn get_task(
    State(state): State<Arc<AppState>>,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    existing_task(&state.owner, &slug).await?;
    let name = slug.clone();
    let (row, rounds) = blocking(state.owner.clone(), move |e| {
        let row = e.board_tasks()?.into_iter().find(|t| t.slug == name);
        Ok((row, e.round_reports(&name)?))
    })
    .await?;
    Ok(Json(
        json!({ "schema": "ganger.web-task/1", "task": row, "rounds": rounds }),
    ))
}

#[utoipa::path(get, path = "/api/tasks/{slug}/report", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "ganger.round-report/1 of the last round, or ganger.pipeline/1"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_report(
    State(state): State<Arc<AppState>>,
    Extension(grant): Extension<Grant>,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let engine = state.engine_for(&grant)?;
    existing_task(&engine, &slug).await?;
    let view = blocking(engine, move |e| {
        let request = StatusRequest {
            slug: Some(slug),
            tree: false,
        };
        e.status(&request, &mut |_| {})
    })
    .await?;
    let value = match view {
        StatusView::Round(report) => serde_json::to_value(report),
        StatusView::Pipeline(report) => serde_json::to_value(report),
        StatusView::List(list) => serde_json::to_value(list),
    };
    value
        .map(Json)
        .map_err(|e| ApiError::internal(format!("cannot write the report: {e}")))
}

#[utoipa::path(get, path = "/api/tasks/{slug}/checks", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "the last round's checks with their output's tail"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_checks(
    State(state): State<Arc<AppState>>,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    existing_task(&state.owner, &slug).await?;
    let name = slug.clone();
    let rounds = blocking(state.owner.clone(), move |e| e.round_reports(&name)).await?;
    let last = rounds.last();
    Ok(Json(json!({
        "schema": "ganger.web-checks/1",
        "task": slug,
        "round": last.map(|r| r.round),
        "checks": last.map(|r| r.checks.clone()).unwrap_or_default(),
    })))
}

#[utoipa::path(get, path = "/api/tasks/{slug}/rounds", tag = "rounds",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "every round's ganger.round-report/1"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn list_rounds(
    State(state): State<Arc<AppState>>,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    existing_task(&state.owner, &slug).await?;
    let rounds = blocking(state.owner.clone(), move |e| e.round_reports(&slug)).await?;
    Ok(Json(json!({ "rounds": rounds })))
}

async fn existing_round(state: &AppState, slug: &str, number: u32) -> ApiResult<()> {
    let task = existing_task(&state.owner, slug).await?;
    if number == 0 || number > task.rounds {
        return Err(ApiError::not_found(format!(
            "task {slug} has no round {number} (it has {})",
            task.rounds
        )));
    }
    Ok(())
}

#[utoipa::path(get, path = "/api/tasks/{slug}/rounds/{round}", tag = "rounds",
    params(("slug" = String, Path, description = "the task"), ("round" = u32, Path, description = "the round's number")),
    responses((status = 200, description = "the round's report and its prompt as sent"),
        (status = 404, description = "no such task or round")),
    security(("token" = [])))]
pub async fn get_round(
    State(state): State<Arc<AppState>>,
    ApiPath((slug, number)): ApiPath<(String, u32)>,
) -> ApiResult<Json<Value>> {
    existing_round(&state, &slug, number).await?;
    let (report, prompt) = blocking(state.owner.clone(), move |e| {
        let report = e
            .round_reports(&slug)?
            .into_iter()
            .find(|r| r.round == number);
        Ok((report, e.round_prompt(&slug, number).ok()))
    })
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
    State(state): State<Arc<AppState>>,
    ApiPath((slug, number)): ApiPath<(String, u32)>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> ApiResult<Json<Value>> {
    existing_round(&state, &slug, number).await?;
    let after = query.after.unwrap_or(0);
    let (lines, read) = blocking(state.owner.clone(), move |e| {
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
async fn stream_patch(
    engine: Arc<Engine>,
    slug: String,
    round: Option<u32>,
) -> ApiResult<Response> {
    let (stream, first) = blocking(engine, move |e| {
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
    State(state): State<Arc<AppState>>,
    ApiPath((slug, number)): ApiPath<(String, u32)>,
) -> ApiResult<Response> {
    existing_round(&state, &slug, number).await?;
    stream_patch(state.owner.clone(), slug, Some(number)).await
}

#[utoipa::path(get, path = "/api/tasks/{slug}/diff", tag = "tasks",
    params(("slug" = String, Path, description = "the task")),
    responses((status = 200, description = "text/x-diff: the task's changes against its base"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_diff(
    State(state): State<Arc<AppState>>,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Response> {
    existing_task(&state.owner, &slug).await?;
    stream_patch(state.owner.clone(), slug, None).await
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
    State(state): State<Arc<AppState>>,
    ApiQuery(query): ApiQuery<JournalQuery>,
) -> ApiResult<Json<Value>> {
    let after = query.after.unwrap_or(0);
    let limit = query.limit.unwrap_or(1000).clamp(1, 1000);
    let entries = blocking(state.owner.clone(), move |e| e.journal_after(after, limit)).await?;
    Ok(Json(
        json!({ "schema": "ganger.web-journal/1", "entries": entries }),
    ))
}

#[utoipa::path(get, path = "/api/fleets", tag = "fleet",
    responses((status = 200, description = "ganger.web-fleets/1: each fleet submitted, its file and limits, and its tasks counted by status")),
    security(("token" = [])))]
pub async fn fleets(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let (records, tasks) = blocking(state.owner.clone(), |e| {
        Ok((e.fleet_records()?, e.board_tasks()?))
    })
    .await?;
    let mut states: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u32>> =
        Default::default();
    for task in tasks {
        if let Some(fleet) = task.fleet {
            let status = task
                .status
                .and_then(|s| serde_json::to_value(s).ok())
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "none".into());
            *states.entry(fleet).or_default().entry(status).or_default() += 1;
        }
    }
    let fleets: Vec<Value> = records
        .into_iter()
        .map(|record| {
            let counts = states.remove(&record.name).unwrap_or_default();
            json!({ "name": record.name, "file": record.file, "limits": record.limits,
                    "created_at": record.created_at, "states": counts })
        })
        .collect();
    Ok(Json(
        json!({ "schema": "ganger.web-fleets/1", "fleets": fleets }),
    ))
}

#[utoipa::path(get, path = "/api/fleets/{name}", tag = "fleet",
    params(("name" = String, Path, description = "the fleet")),
    responses((status = 200, description = "ganger.fleet-status/1: the fleet's tasks, what each waits on")),
    security(("token" = [])))]
pub async fn fleet(
    State(state): State<Arc<AppState>>,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let status = blocking(state.owner.clone(), move |e| e.fleet_status(Some(&name))).await?;
    serde_json::to_value(status)
        .map(Json)
        .map_err(|e| ApiError::internal(format!("cannot write the fleet: {e}")))
}

#[utoipa::path(get, path = "/api/queue", tag = "fleet",
    responses((status = 200, description = "ganger.fleet-status/1 of every queued item")),
    security(("token" = [])))]
pub async fn queue(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let status = blocking(state.owner.clone(), |e| e.fleet_status(None)).await?;
    serde_json::to_value(status)
        .map(Json)
        .map_err(|e| ApiError::internal(format!("cannot write the queue: {e}")))
}

#[utoipa::path(get, path = "/api/rounds", tag = "rounds",
    responses((status = 200, description = "ganger.web-rounds/1: every round as a point in time (state, agent, model, cost, tokens, fleet) and the budgets set, for plots")),
    security(("token" = [])))]
pub async fn all_rounds(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    let history = blocking(state.owner.clone(), |e| e.round_history()).await?;
    let mut value = serde_json::to_value(history)
        .map_err(|e| ApiError::internal(format!("cannot write the rounds: {e}")))?;
    value["schema"] = "ganger.web-rounds/1".into();
    Ok(Json(value))
}

#[utoipa::path(get, path = "/api/whoami", tag = "auth",
    responses((status = 200, description = "the commander the token acts as, and its access")),
    security(("token" = [])))]
pub async fn whoami(Extension(grant): Extension<Grant>) -> Json<Value> {
    Json(json!({ "commander": grant.commander, "access": grant.access }))
}
