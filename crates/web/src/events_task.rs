//! `GET /api/tasks/{slug}/events`: one task's rounds as they stream. Events: `round` (the
//! round's report, when the feed reaches a round and again when it ends) and `line` (one line
//! of the agent's stream read through its adapter: its number, the agent's type, ganger's
//! events). Every id is `ROUND:OFFSET`, the byte offset of the round's stream just past what
//! was sent, so a client that reconnects with `Last-Event-ID` goes on from there, read from
//! the store, and sees no line twice. Without an id the feed starts at round `?round=N`'s
//! first line (default: the task's last round), and follows later rounds as they start.

use crate::extract::{ApiPath, ApiQuery};
use crate::problem::{ApiError, ApiResult};
use crate::sse::{channel, json_event, last_event_id};
use crate::state::AppState;
use crate::tokens::Grant;
use axum::Extension;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use ganger_engine::{Engine, EngineError, RoundFeed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How often a running round's stream is read.
const POLL: Duration = Duration::from_millis(50);

/// Where a task's feed starts.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
pub struct TaskEventsQuery {
    /// The round to start at (default: the last one).
    pub round: Option<u32>,
}

fn parse_id(text: &str) -> Option<(u32, u64)> {
    let (round, offset) = text.split_once(':')?;
    Some((round.parse().ok()?, offset.parse().ok()?))
}

#[utoipa::path(get, path = "/api/tasks/{slug}/events", tag = "events",
    params(("slug" = String, Path, description = "the task"), TaskEventsQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "ROUND:OFFSET of the last event seen")),
    responses((status = 200, description = "text/event-stream: round, line"),
        (status = 404, description = "no such task")),
    security(("token" = [])))]
pub async fn task_events(
    State(state): State<Arc<AppState>>,
    Extension(grant): Extension<Grant>,
    ApiPath(slug): ApiPath<String>,
    ApiQuery(query): ApiQuery<TaskEventsQuery>,
    headers: HeaderMap,
) -> ApiResult<impl IntoResponse> {
    let engine = state.engine_for(&grant)?;
    let task = crate::routes_read::existing_task(&engine, &slug).await?;
    let start = match last_event_id(&headers) {
        Some(text) => parse_id(&text).ok_or_else(|| {
            ApiError::invalid(format!("Last-Event-ID {text:?} is not ROUND:OFFSET"))
        })?,
        None => (query.round.unwrap_or(task.rounds).max(1), 0),
    };
    if start.0 > task.rounds.max(1) {
        return Err(ApiError::not_found(format!(
            "task {slug} has no round {} (it has {})",
            start.0, task.rounds
        )));
    }
    let (sender, sse) = channel();
    std::thread::Builder::new()
        .name("task-events".into())
        .spawn(move || follow_task(&engine, &slug, start, &sender))
        .map_err(|e| ApiError::internal(format!("cannot start a feed: {e}")))?;
    Ok(sse)
}

/// Sends `event`; false once the client has gone.
fn send(
    sender: &mpsc::Sender<axum::response::sse::Event>,
    event: axum::response::sse::Event,
) -> bool {
    sender.blocking_send(event).is_ok()
}

fn follow_task(
    engine: &Engine,
    slug: &str,
    (mut round, offset): (u32, u64),
    sender: &mpsc::Sender<axum::response::sse::Event>,
) {
    let mut feed: Option<RoundFeed> = None;
    let mut offset = offset;
    loop {
        if sender.is_closed() {
            return;
        }
        if feed.is_none() {
            match engine.round_feed(slug, round, offset) {
                Ok(made) => {
                    if !send_report(engine, slug, round, offset, sender) {
                        return;
                    }
                    feed = Some(made);
                }
                // The round is not there yet (a queued start): look again.
                Err(e) if e.kind == ganger_engine::ErrorKind::Invalid => {
                    std::thread::sleep(POLL * 4);
                    continue;
                }
                Err(_) => return,
            }
        }
        let Some(current) = feed.as_mut() else {
            continue;
        };
        let mut alive = true;
        let read = current.poll(engine, &mut |line| {
            if alive {
                let id = format!("{round}:{}", line.offset);
                let data = serde_json::json!({ "round": round, "line": line });
                alive = send(sender, json_event("line", &id, &data));
            }
        });
        if !alive {
            return;
        }
        let read = match read {
            Ok(read) => read,
            Err(_) => return,
        };
        offset = read.offset;
        if read.running {
            std::thread::sleep(POLL);
            continue;
        }
        // The round ended: its final report, then the next round once there is one.
        if !send_report(engine, slug, round, offset, sender) {
            return;
        }
        loop {
            if sender.is_closed() {
                return;
            }
            match engine.find_task(slug) {
                Ok(Some(task)) if task.rounds > round => break,
                Ok(Some(_)) => std::thread::sleep(POLL * 4),
                _ => return,
            }
        }
        round += 1;
        offset = 0;
        feed = None;
    }
}

fn send_report(
    engine: &Engine,
    slug: &str,
    round: u32,
    offset: u64,
    sender: &mpsc::Sender<axum::response::sse::Event>,
) -> bool {
    let report: Result<_, EngineError> = engine
        .round_reports(slug)
        .map(|reports| reports.into_iter().find(|r| r.round == round));
    match report {
        Ok(Some(report)) => send(
            sender,
            json_event("round", &format!("{round}:{offset}"), &report),
        ),
        Ok(None) => true,
        Err(_) => false,
    }
}
