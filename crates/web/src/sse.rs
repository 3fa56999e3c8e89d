//! Server-sent events from a producer: the producer (a task, or a blocking thread for engine
//! reads) sends [`Event`]s into a bounded channel, and the response streams them. A client
//! that goes away closes the channel, and the producer stops at its next send or check.

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::mpsc;

/// How many events may wait for a slow client before the producer waits.
const BUFFER: usize = 256;

/// A channel and the SSE response that streams what is sent into it.
pub fn channel() -> (
    mpsc::Sender<Event>,
    Sse<impl Stream<Item = Result<Event, Infallible>>>,
) {
    let (sender, receiver) = mpsc::channel(BUFFER);
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|event| (Ok(event), receiver))
    });
    let sse = Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)));
    (sender, sse)
}

/// An event named `name`, with id `id` and `data` as JSON.
pub fn json_event(name: &str, id: &str, data: &impl serde::Serialize) -> Event {
    Event::default()
        .event(name)
        .id(id)
        .data(serde_json::to_string(data).unwrap_or_else(|_| "null".into()))
}

/// The `Last-Event-ID` a reconnecting client sent.
pub fn last_event_id(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}
