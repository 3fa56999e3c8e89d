//! The HTTP server: one axum router over state shared with the [`crate::FakeLlm`] handle.
//!
//! Every path goes through one fallback handler, because the server must record each request
//! whole (method, path, query, headers, body) before deciding anything, including for paths
//! it does not serve.

mod fault_response;
mod inspection;
mod model_request;
mod wire_response;

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;

use crate::recording::RecordedRequest;
use crate::script_check::CheckedScript;
use crate::turn_picker::TurnPicker;

/// The state behind one lock: the picker and the record must agree on request order.
#[derive(Debug)]
pub(crate) struct Ledger {
    pub(crate) picker: TurnPicker,
    pub(crate) requests: Vec<RecordedRequest>,
}

/// What the handlers and the handle share.
#[derive(Debug)]
pub(crate) struct Shared {
    ledger: Mutex<Ledger>,
    /// Model requests in flight per model (a witness for limit tests).
    pub(crate) in_flight: crate::witness::InFlightCounter,
    arrived: Condvar,
    started: Instant,
}

impl Shared {
    pub(crate) fn new(script: CheckedScript) -> Self {
        Shared {
            ledger: Mutex::new(Ledger {
                picker: TurnPicker::new(script),
                requests: Vec::new(),
            }),
            in_flight: crate::witness::InFlightCounter::default(),
            arrived: Condvar::new(),
            started: Instant::now(),
        }
    }

    /// The ledger; a panic while it was held cannot leave it half-written, so poisoning is
    /// ignored.
    pub(crate) fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a request decided under `ledger` and wakes waiters.
    pub(crate) fn record(&self, mut ledger: MutexGuard<'_, Ledger>, request: RecordedRequest) {
        ledger.requests.push(request);
        drop(ledger);
        self.arrived.notify_all();
    }

    /// A copy of every recorded request.
    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.ledger().requests.clone()
    }

    /// Waits until at least `count` requests are recorded; `Err` carries how many arrived.
    pub(crate) fn wait_for(
        &self,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<RecordedRequest>, usize> {
        let ledger = self.ledger();
        let (ledger, _) = self
            .arrived
            .wait_timeout_while(ledger, timeout, |ledger| ledger.requests.len() < count)
            .unwrap_or_else(PoisonError::into_inner);
        if ledger.requests.len() >= count {
            Ok(ledger.requests.clone())
        } else {
            Err(ledger.requests.len())
        }
    }

    /// Milliseconds since the server started.
    pub(crate) fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// The router serving every path.
pub(crate) fn router(shared: std::sync::Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

/// The one handler: inspection paths, model requests, everything else.
async fn handle(
    State(shared): State<std::sync::Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(response) = inspection::answer(&shared, &method, &uri) {
        return response;
    }
    let arrival = model_request::Arrival::new(&shared, method, uri, headers, &body);
    model_request::answer(&shared, arrival).await
}
