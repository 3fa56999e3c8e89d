//! `--metrics ADDRESS:PORT` of `ganger serve` and `ganger worker`: Prometheus's text format at
//! `/metrics`, and `/healthz` (also `/health`), 200 while the store answers and the process's
//! claim (a worker's, or serve's scheduler's) is held, 503 with the cause otherwise. A listener of its own, bounded as
//! the API's is (`connections.rs`: connections held, time to send headers, request bodies),
//! with a thread and a small runtime of its own beside the scheduler.
//!
//! A look at the store runs on a blocking thread, one at a time: a store cut off (a server
//! stopped, a link down) holds that one look until the store's own patience runs out, while
//! every request meanwhile is answered within [`LOOK_LIMIT`] (503: the store did not answer),
//! so that neither scrapers nor load balancers pile threads up behind a dead store.

mod families;
mod text;

use crate::connections::Limits;
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use families::Pings;
use ganger_engine::Engine;
use ganger_store::ClaimKey;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long a request waits for the store's answer before it is answered without it.
pub const LOOK_LIMIT: Duration = Duration::from_secs(3);

/// What the listener may hold: a few scrapers and health checkers, not a crowd.
const LIMITS: Limits = Limits {
    connections: 32,
    blocking_threads: 2,
};

/// A running metrics listener (it serves until the process ends).
#[derive(Debug)]
pub struct MetricsServer {
    /// Where it listens (the port chosen when asked for port 0).
    pub address: SocketAddr,
}

/// What the handlers share.
struct Shared {
    engine: Arc<Engine>,
    /// The process's own claim (a worker's, or serve's scheduler's).
    claim: Option<ClaimKey>,
    pings: Pings,
    /// Held by the one look at the store under way.
    look: Arc<tokio::sync::Mutex<()>>,
}

/// Binds `address` and serves the metrics and the health check on a thread of its own.
/// `claim` is the process's own claim in the store (a worker's), which the health check and
/// the metrics watch too.
pub fn start(
    engine: Arc<Engine>,
    address: SocketAddr,
    claim: Option<ClaimKey>,
) -> Result<MetricsServer, String> {
    let failed = |e: std::io::Error| format!("cannot listen on {address} for --metrics: {e}");
    let listener = std::net::TcpListener::bind(address).map_err(failed)?;
    listener.set_nonblocking(true).map_err(failed)?;
    let bound = listener.local_addr().map_err(failed)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(LIMITS.blocking_threads)
        .enable_all()
        .thread_name("ganger-metrics")
        .build()
        .map_err(|e| format!("cannot start the metrics listener's runtime: {e}"))?;
    let shared = Arc::new(Shared {
        engine,
        claim,
        pings: Pings::default(),
        look: Arc::new(tokio::sync::Mutex::new(())),
    });
    let app = router(shared);
    std::thread::Builder::new()
        .name("ganger-metrics".into())
        .spawn(move || {
            runtime.block_on(async move {
                if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                    crate::connections::serve(listener, app, LIMITS).await;
                }
            });
        })
        .map_err(|e| format!("cannot start the metrics listener's thread: {e}"))?;
    Ok(MetricsServer { address: bound })
}

fn router(shared: Arc<Shared>) -> Router {
    let scrape = shared.clone();
    let health = shared.clone();
    let health_too = shared;
    Router::new()
        .route("/metrics", get(move || metrics(scrape.clone())))
        .route("/healthz", get(move || healthz(health.clone())))
        .route("/health", get(move || healthz(health_too.clone())))
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "no such path: /metrics and /healthz are served here\n",
            )
        })
        .layer(axum::middleware::from_fn(crate::bounded_body::bounded_body))
}

/// Runs `read` on a blocking thread once the look before it has ended, and counts the
/// store's answer time (`took` of what it read) or its failure; the store did not answer when
/// that does not happen within [`LOOK_LIMIT`]. The look goes on after that (the store
/// answers, or its patience runs out), holding the turn, so that at most one thread waits on
/// the store.
async fn look<T: Send + 'static>(
    shared: &Arc<Shared>,
    read: impl FnOnce(&Shared) -> Result<T, String> + Send + 'static,
    took: fn(&T) -> Duration,
) -> Result<T, String> {
    let turn = shared.look.clone();
    let on = shared.clone();
    let run = async move {
        let held = turn.lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let out = read(&on);
            match &out {
                Ok(value) => on.pings.answered(took(value)),
                Err(_) => on.pings.failed(),
            }
            drop(held);
            out
        })
        .await
        .ok()
    };
    match tokio::time::timeout(LOOK_LIMIT, run).await.ok().flatten() {
        Some(out) => out,
        None => {
            shared.pings.failed();
            Err(format!(
                "the store did not answer within {} s",
                LOOK_LIMIT.as_secs()
            ))
        }
    }
}

async fn metrics(shared: Arc<Shared>) -> Response {
    let reading = look(
        &shared,
        |shared| shared.engine.fleet_metrics(shared.claim.as_ref()),
        |read| read.store_ping,
    )
    .await;
    let body = families::write(&reading, &shared.pings);
    ([(header::CONTENT_TYPE, text::CONTENT_TYPE)], body).into_response()
}

async fn healthz(shared: Arc<Shared>) -> Response {
    let health = look(
        &shared,
        |shared| shared.engine.health(shared.claim.as_ref()),
        |took| *took,
    )
    .await;
    let plain = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    match health {
        Ok(_) => (StatusCode::OK, plain, "ok\n".to_owned()).into_response(),
        Err(cause) => {
            (StatusCode::SERVICE_UNAVAILABLE, plain, format!("{cause}\n")).into_response()
        }
    }
}
