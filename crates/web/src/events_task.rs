//! `GET /api/tasks/{slug}/events`: one task's rounds as they stream. Events: `round` (the
//! round's report, when the feed reaches a round and again when it ends) and `line` (one line
//! of the agent's stream read through its adapter: its number, the agent's type, ganger's
//! events). Every id is `ROUND:OFFSET`, the byte offset of the round's stream just past what
//! was sent, so a client that reconnects with `Last-Event-ID` goes on from there, read from
//! the store, and sees no line twice. Without an id the feed starts at round `?round=N`'s
//! first line (default: the task's last round), and follows later rounds as they start.
//!
//! A client is a task of the server, not a thread: it reads from the store what it missed (a
//! page at a time, on the blocking pool), then takes what the task's shared feed
//! (`task_feed.rs`) reads, skipping what it sent already; a client that falls behind the feed
//! reads from the store again.

use crate::extract::{Acting, ApiPath, ApiQuery};
use crate::problem::{ApiError, ApiResult};
use crate::sse::{channel, last_event_id};
use crate::state::AppState;
use crate::task_feed::{FeedEvent, report_json};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::response::sse::Event;
use ganger_engine::{Engine, RoundFeed};
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc};

/// The most of a stream read from the store at a time for one client.
const PAGE: usize = 256 * 1024;

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
        (status = 404, description = "no such task, or no such round")),
    security(("token" = [])))]
pub async fn task_events(
    State(state): State<Arc<AppState>>,
    Acting(engine): Acting,
    ApiPath(slug): ApiPath<String>,
    ApiQuery(query): ApiQuery<TaskEventsQuery>,
    headers: HeaderMap,
) -> ApiResult<impl IntoResponse> {
    let name = slug.clone();
    let task = crate::state::blocking(engine.clone(), move |e| e.task(&name)).await?;
    let (round, offset) = match last_event_id(&headers) {
        Some(text) => parse_id(&text).ok_or_else(|| {
            ApiError::invalid(format!("Last-Event-ID {text:?} is not ROUND:OFFSET"))
        })?,
        None => (query.round.unwrap_or(task.rounds.max(1)), 0),
    };
    // Round 1 may be on its way (a queued start); a round before it or past it never is.
    if round == 0 || round > task.rounds.max(1) {
        return Err(ApiError::not_found(format!(
            "task {slug} has no round {round} (it has {})",
            task.rounds
        )));
    }
    let changes = state.task_feeds.subscribe(&slug);
    let (sender, sse) = channel();
    let client = Client {
        engine,
        slug,
        at: Position {
            round,
            offset,
            reached: false,
            ended: false,
        },
        sender,
    };
    tokio::spawn(client.follow(changes));
    Ok(sse)
}

/// What a client has been sent of the task's rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Position {
    /// The round it is at.
    round: u32,
    /// The stream's byte offset past the last line sent.
    offset: u64,
    /// Whether the round's report was sent as the feed reached it.
    reached: bool,
    /// Whether the round's final report was sent.
    ended: bool,
}

/// What to do with an event of the shared feed.
#[derive(Debug, PartialEq)]
enum Step {
    /// Sent already (or from before the client's start): skip it.
    Skip,
    /// Send it, as `name` with id `id`.
    Send(&'static str, String),
    /// The client missed something: read from the store again.
    Behind,
    /// The task is gone: the stream ends.
    End,
}

impl Position {
    /// The next round, once this one ended.
    fn next_round(&mut self, round: u32) {
        *self = Position {
            round,
            offset: 0,
            reached: false,
            ended: false,
        };
    }

    fn id(&self) -> String {
        format!("{}:{}", self.round, self.offset)
    }

    /// Where the client is after `event`, and what to do with it.
    fn take(&mut self, event: &FeedEvent) -> Step {
        match *event {
            FeedEvent::Gone => Step::End,
            FeedEvent::Reached { round, .. } => {
                if round < self.round || (round == self.round && self.reached) {
                    return Step::Skip;
                }
                if round == self.round + 1 && self.ended {
                    self.next_round(round);
                }
                if round != self.round {
                    return Step::Behind;
                }
                self.reached = true;
                Step::Send("round", self.id())
            }
            FeedEvent::Line { round, offset, .. } => {
                if round < self.round
                    || (round == self.round && (offset <= self.offset || self.ended))
                {
                    return Step::Skip;
                }
                if round != self.round || !self.reached {
                    return Step::Behind;
                }
                self.offset = offset;
                Step::Send("line", self.id())
            }
            FeedEvent::Ended { round, offset, .. } => {
                if round < self.round || (round == self.round && self.ended) {
                    return Step::Skip;
                }
                if round != self.round || !self.reached || offset > self.offset {
                    return Step::Behind;
                }
                self.ended = true;
                Step::Send("round", self.id())
            }
        }
    }
}

/// One client of a task's events.
struct Client {
    engine: Arc<Engine>,
    slug: String,
    at: Position,
    sender: mpsc::Sender<Event>,
}

/// What a page read from the store gave.
struct Page {
    events: Vec<Event>,
    at: Position,
    /// The reader of the round, when it was not read to its end.
    feed: Option<RoundFeed>,
    /// Whether the store has more now (the page stopped at its size).
    more: bool,
}

impl Client {
    async fn follow(mut self, mut changes: broadcast::Receiver<Arc<FeedEvent>>) {
        loop {
            if !self.catch_up().await {
                return;
            }
            loop {
                let event = tokio::select! {
                    event = changes.recv() => event,
                    () = self.sender.closed() => return,
                };
                let event = match event {
                    Ok(event) => event,
                    // Too far behind the feed: from the store again.
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return,
                };
                let (name, id) = match self.at.take(&event) {
                    Step::Skip => continue,
                    Step::Behind => break,
                    Step::End => return,
                    Step::Send(name, id) => (name, id),
                };
                let data = match &*event {
                    FeedEvent::Line { data, .. } => Some(data.as_str()),
                    FeedEvent::Reached { report, .. } | FeedEvent::Ended { report, .. } => {
                        report.as_deref()
                    }
                    FeedEvent::Gone => None,
                };
                if let Some(data) = data
                    && self
                        .sender
                        .send(Event::default().event(name).id(id).data(data))
                        .await
                        .is_err()
                {
                    return;
                }
            }
        }
    }

    /// Sends what the store has past the client's position; false once the client is gone
    /// (or the task is).
    async fn catch_up(&mut self) -> bool {
        let mut feed: Option<RoundFeed> = None;
        loop {
            if self.at.ended {
                let engine = self.engine.clone();
                let slug = self.slug.clone();
                let task = tokio::task::spawn_blocking(move || engine.find_task(&slug)).await;
                match task {
                    Ok(Ok(Some(task))) if task.rounds > self.at.round => {
                        self.at.next_round(self.at.round + 1);
                    }
                    Ok(Ok(Some(_))) => return true,
                    _ => return false,
                }
            }
            let (engine, slug, at) = (self.engine.clone(), self.slug.clone(), self.at);
            let page =
                tokio::task::spawn_blocking(move || read_page(&engine, &slug, at, feed)).await;
            let Ok(page) = page else { return false };
            for event in page.events {
                if self.sender.send(event).await.is_err() {
                    return false;
                }
            }
            self.at = page.at;
            feed = page.feed;
            if !page.more && !self.at.ended {
                // The round runs on (or is not there yet): the shared feed has the rest.
                return true;
            }
        }
    }
}

/// Reads at most [`PAGE`] of round `at.round` from `at.offset` (through `feed` when one is
/// open already), with the round's report as the client reaches it and ends it.
fn read_page(engine: &Engine, slug: &str, mut at: Position, feed: Option<RoundFeed>) -> Page {
    let mut events = Vec::new();
    let mut feed = match feed {
        Some(feed) => feed,
        None => match engine.round_feed(slug, at.round, at.offset) {
            Ok(feed) => feed,
            // Not there yet (a queued start), or gone: nothing now.
            Err(_) => {
                return Page {
                    events,
                    at,
                    feed: None,
                    more: false,
                };
            }
        },
    };
    let report = |at: &Position| {
        report_json(engine, slug, at.round)
            .map(|data| Event::default().event("round").id(at.id()).data(data))
    };
    if !at.reached {
        at.reached = true;
        events.extend(report(&at));
    }
    let round = at.round;
    let mut offset = at.offset;
    let read = engine
        .workspace()
        .existing_store()
        .and_then(|store| match store {
            Some(store) => feed.poll_in(&*store, PAGE, &mut |line| {
                offset = line.offset;
                let data = serde_json::json!({ "round": round, "line": line });
                events.push(
                    Event::default()
                        .event("line")
                        .id(format!("{round}:{offset}"))
                        .data(data.to_string()),
                );
            }),
            None => Err(ganger_engine::EngineError::not_found(format!(
                "no task {slug}"
            ))),
        });
    let Ok(read) = read else {
        return Page {
            events,
            at,
            feed: None,
            more: false,
        };
    };
    at.offset = read.offset.max(at.offset);
    if read.running {
        // Stopped at the page's size, or the round runs: `more` tells which.
        return Page {
            events,
            at,
            more: read.more,
            feed: Some(feed),
        };
    }
    at.ended = true;
    events.extend(report(&at));
    Page {
        events,
        at,
        feed: None,
        more: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(round: u32, offset: u64) -> FeedEvent {
        FeedEvent::Line {
            round,
            offset,
            data: String::new(),
        }
    }

    #[test]
    fn a_client_takes_from_the_feed_only_what_it_was_not_sent() {
        let mut at = Position {
            round: 2,
            offset: 40,
            reached: true,
            ended: false,
        };
        // The feed read the round from its start: what the client has is skipped.
        assert_eq!(at.take(&line(2, 10)), Step::Skip);
        assert_eq!(at.take(&line(2, 40)), Step::Skip);
        assert_eq!(at.take(&line(1, 90)), Step::Skip);
        assert_eq!(at.take(&line(2, 55)), Step::Send("line", "2:55".into()));
        let ended = FeedEvent::Ended {
            round: 2,
            offset: 55,
            report: None,
        };
        assert_eq!(at.take(&ended), Step::Send("round", "2:55".into()));
        assert_eq!(at.take(&ended), Step::Skip);
        // The next round, from its start.
        let reached = FeedEvent::Reached {
            round: 3,
            report: None,
        };
        assert_eq!(at.take(&reached), Step::Send("round", "3:0".into()));
        assert_eq!(at.take(&line(3, 7)), Step::Send("line", "3:7".into()));
        // A round skipped, or a line of a round whose start it missed: from the store.
        assert_eq!(at.take(&line(5, 7)), Step::Behind);
        let mut fresh = Position {
            round: 1,
            offset: 0,
            reached: false,
            ended: false,
        };
        assert_eq!(fresh.take(&line(1, 5)), Step::Behind);
        let ended_early = FeedEvent::Ended {
            round: 1,
            offset: 99,
            report: None,
        };
        fresh.reached = true;
        assert_eq!(fresh.take(&ended_early), Step::Behind);
        assert_eq!(fresh.take(&FeedEvent::Gone), Step::End);
    }
}
