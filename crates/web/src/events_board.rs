//! `GET /api/events`: the board's live events. The first event is `tasks`, the whole task
//! table; then `journal` for each journal entry, `task` for a task's changed row and
//! `task-gone` for a task removed. Every event's id is the last journal entry it follows,
//! so a client that reconnects with `Last-Event-ID: N` gets the table as it is now (state,
//! not history) and every journal entry after N, from the store, each once. A first
//! connection (no id) gets the last [`FIRST_JOURNAL`] entries.

use crate::board_feed::BoardChange;
use crate::problem::{ApiError, ApiResult};
use crate::sse::{channel, json_event, last_event_id};
use crate::state::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// How many journal entries a first connection gets.
pub const FIRST_JOURNAL: i64 = 200;

/// How many journal entries are read from the store at a time.
const PAGE: u32 = 1000;

#[utoipa::path(get, path = "/api/events", tag = "events",
    params(("Last-Event-ID" = Option<i64>, Header, description = "the last event id seen")),
    responses((status = 200, description = "text/event-stream: tasks, journal, task, task-gone")),
    security(("token" = [])))]
pub async fn board_events(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> ApiResult<impl IntoResponse> {
    let resume = match last_event_id(&headers) {
        Some(text) => Some(text.parse::<i64>().map_err(|_| {
            ApiError::invalid(format!(
                "Last-Event-ID {text:?} is not an id of this stream"
            ))
        })?),
        None => None,
    };
    let (sender, sse) = channel();
    let engine = state.owner.clone();
    let board = state.board.clone();
    tokio::spawn(async move {
        let (snapshot, mut changes) = board.subscribe();
        let mut sent = resume.unwrap_or(snapshot.journal_id - FIRST_JOURNAL).max(0);
        let tasks: Vec<&ganger_engine::BoardTask> = snapshot.tasks.values().map(|t| &**t).collect();
        let id = snapshot.journal_id.to_string();
        if sender
            .send(json_event("tasks", &id, &json!({ "tasks": tasks })))
            .await
            .is_err()
        {
            return;
        }
        // Entries between the client's id and the snapshot, from the store, a page at a time.
        while sent < snapshot.journal_id {
            let from = sent;
            let page = crate::state::blocking(engine.clone(), move |e| e.journal_after(from, PAGE))
                .await
                .unwrap_or_default();
            if page.is_empty() {
                break;
            }
            for entry in page.into_iter().filter(|e| e.id <= snapshot.journal_id) {
                sent = entry.id;
                let event = json_event("journal", &entry.id.to_string(), &entry);
                if sender.send(event).await.is_err() {
                    return;
                }
            }
            if sent == from {
                break;
            }
        }
        sent = sent.max(snapshot.journal_id);
        loop {
            let event = match changes.recv().await {
                Ok(BoardChange::Journal(entry)) => {
                    if entry.id <= sent {
                        continue;
                    }
                    sent = entry.id;
                    json_event("journal", &entry.id.to_string(), &*entry)
                }
                Ok(BoardChange::Task(task)) => json_event("task", &sent.to_string(), &*task),
                Ok(BoardChange::TaskGone(slug)) => {
                    json_event("task-gone", &sent.to_string(), &json!({ "slug": slug }))
                }
                Err(RecvError::Lagged(_)) => {
                    // Too slow to keep up: the client reconnects and gets what it missed.
                    return;
                }
                Err(RecvError::Closed) => return,
            };
            if sender.send(event).await.is_err() {
                return;
            }
        }
    });
    Ok(sse)
}
