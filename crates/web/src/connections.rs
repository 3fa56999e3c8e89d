//! Accepting connections within bounds, so that clients that hold connections without using
//! them (slowloris) can starve neither the API nor the scheduler that shares the process:
//!
//! - A request's headers must arrive within [`HEADER_TIMEOUT`] of the connection's start or of
//!   the last answer on it (an idle keep-alive connection is closed as late).
//! - At most [`Limits::connections`] are held, a share of the process's descriptors that
//!   leaves the scheduler the rest. At the cap, the connection that has waited longest with no
//!   request in flight is let go for the new one; with every connection busy (a stream, a
//!   request being answered), the new one is answered 503 and closed.
//! - A failed accept (descriptors running out) lets an idle connection go and carries on; it
//!   never ends the server.

use crate::guarded_body::Guarded;
use crate::problem::ApiError;
use axum::Router;
use axum::body::Body;
use axum::response::IntoResponse;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

/// How long a client has to send a request's headers, from the connection's start or from
/// the last answer on it.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection at the cap waits for an idle one to be let go before it is refused.
const SHED_WAIT: Duration = Duration::from_secs(1);

/// How long a failed accept waits before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// What the server may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections held at once.
    pub connections: usize,
    /// Threads for blocking engine calls (each may hold a store open: a few descriptors).
    pub blocking_threads: usize,
}

impl Limits {
    /// The limits for a process that may open `descriptors` files: a quarter of them for
    /// connections and at most a sixteenth for blocking threads (three descriptors each at
    /// most, a store open), so that more than half stay with the scheduler.
    pub fn for_descriptors(descriptors: u64) -> Limits {
        let share = |divisor: u64, low: u64, high: u64| {
            usize::try_from((descriptors / divisor).clamp(low, high)).unwrap_or(16)
        };
        Limits {
            connections: share(4, 16, 4096),
            blocking_threads: share(16, 8, 128),
        }
    }

    /// The limits for this process, from its soft limit of open files.
    pub fn of_this_process() -> Limits {
        let descriptors = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(1024);
        Limits::for_descriptors(descriptors)
    }
}

/// A listener: TCP or a unix socket.
pub trait Accept: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&self) -> impl Future<Output = std::io::Result<Self::Io>> + Send;
}

impl Accept for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;
    async fn accept(&self) -> std::io::Result<Self::Io> {
        let (stream, _) = tokio::net::TcpListener::accept(self).await?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }
}

impl Accept for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;
    async fn accept(&self) -> std::io::Result<Self::Io> {
        tokio::net::UnixListener::accept(self)
            .await
            .map(|(stream, _)| stream)
    }
}

/// One held connection.
#[derive(Debug, Default)]
struct Held {
    /// Requests being answered on it (a stream counts until it ends).
    busy: AtomicUsize,
    /// Told when the connection is to be let go.
    shed: Notify,
}

/// Every held connection, oldest first.
#[derive(Debug, Default)]
struct Book {
    held: Mutex<BTreeMap<u64, Arc<Held>>>,
}

impl Book {
    /// Lets the oldest connection with no request in flight go; false when every one is busy.
    fn shed_one(&self) -> bool {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let idle = held.values().find(|h| h.busy.load(Ordering::Acquire) == 0);
        match idle {
            Some(connection) => {
                connection.shed.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Serves `app` on `listener` within `limits`, until the process ends.
pub async fn serve<L: Accept>(listener: L, app: Router, limits: Limits) {
    let slots = Arc::new(Semaphore::new(limits.connections));
    let book = Arc::new(Book::default());
    let mut next_id = 0u64;
    loop {
        let io = match listener.accept().await {
            Ok(io) => io,
            Err(_) => {
                // Out of descriptors (or a connection gone before it was taken): make room
                // and go on; the scheduler beside us is never held up by this loop.
                book.shed_one();
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => match make_room(&book, &slots).await {
                Some(permit) => permit,
                None => {
                    tokio::spawn(refuse(io));
                    continue;
                }
            },
        };
        next_id += 1;
        let held = Arc::new(Held::default());
        book.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(next_id, held.clone());
        tokio::spawn(serve_one(
            io,
            app.clone(),
            held,
            Release {
                book: book.clone(),
                id: next_id,
                _permit: permit,
            },
        ));
    }
}

/// At the cap: lets the oldest idle connection go and takes its place; `None` when every
/// connection is busy.
async fn make_room(book: &Book, slots: &Arc<Semaphore>) -> Option<OwnedSemaphorePermit> {
    if !book.shed_one() {
        return None;
    }
    tokio::time::timeout(SHED_WAIT, slots.clone().acquire_owned())
        .await
        .ok()?
        .ok()
}

/// A held connection's place: given back when the connection ends.
struct Release {
    book: Arc<Book>,
    id: u64,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Release {
    fn drop(&mut self) {
        self.book
            .held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

async fn serve_one<I>(io: I, app: Router, held: Arc<Held>, release: Release)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let counted = held.clone();
    let service =
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let app = app.clone();
            let busy = Busy::of(&counted);
            async move {
                let response = app
                    .oneshot(request.map(Body::new))
                    .await
                    .unwrap_or_else(|never| match never {});
                // The request is in flight until its answer's body is sent (or dropped).
                Ok::<_, std::convert::Infallible>(response.map(|body| Guarded::wrap(body, busy)))
            }
        });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::select! {
        _ = connection => {}
        () = held.shed.notified() => {}
    }
    drop(release);
}

/// A request in flight on a connection.
struct Busy(Arc<Held>);

impl Busy {
    fn of(held: &Arc<Held>) -> Busy {
        held.busy.fetch_add(1, Ordering::AcqRel);
        Busy(held.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers a connection past the cap with 503 (`ganger.error/1`) and closes it.
async fn refuse<I: AsyncWrite + Unpin>(mut io: I) {
    let error = ApiError::unavailable(
        "the server holds as many connections as it may, each one busy: try again shortly",
    )
    .into_response();
    let body = axum::body::to_bytes(error.into_body(), 4096)
        .await
        .unwrap_or_default();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\nretry-after: 1\r\n\r\n",
        body.len()
    );
    let write = async {
        io.write_all(head.as_bytes()).await?;
        io.write_all(&body).await?;
        io.shutdown().await
    };
    let _ = tokio::time::timeout(SHED_WAIT, write).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_leave_most_descriptors_to_the_scheduler() {
        let usual = Limits::for_descriptors(1024);
        assert_eq!(
            usual,
            Limits {
                connections: 256,
                blocking_threads: 64
            }
        );
        assert!(usual.connections + 3 * usual.blocking_threads < 1024 / 2);
        assert_eq!(Limits::for_descriptors(64).connections, 16);
        assert_eq!(Limits::for_descriptors(1 << 20).connections, 4096);
    }

    #[test]
    fn the_oldest_idle_connection_is_let_go_first() {
        let book = Book::default();
        let (busy, idle, newer) = (
            Arc::new(Held::default()),
            Arc::new(Held::default()),
            Arc::new(Held::default()),
        );
        busy.busy.store(1, Ordering::Release);
        {
            let mut held = book.held.lock().unwrap();
            held.insert(1, busy.clone());
            held.insert(2, idle.clone());
            held.insert(3, newer.clone());
        }
        assert!(book.shed_one());
        // Told: its next wait for the signal ends at once.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            tokio::time::timeout(Duration::from_millis(100), idle.shed.notified())
                .await
                .expect("the oldest idle connection was told to go");
            assert!(
                tokio::time::timeout(Duration::from_millis(50), busy.shed.notified())
                    .await
                    .is_err()
            );
        });
        book.held
            .lock()
            .unwrap()
            .retain(|_, h| h.busy.load(Ordering::Acquire) > 0);
        assert!(!book.shed_one(), "only busy connections are left");
    }
}
