//! [`FakeLlm`]: a fake model server on a background thread, for synchronous tests.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::bound_server::{BoundServer, base_url};
use crate::error::FakeLlmError;
use crate::recording::RecordedRequest;
use crate::script::Script;
use crate::server::Shared;

/// A running fake model server; it stops when dropped.
///
/// ```
/// use ganger_fake_llm::{FakeLlm, Script};
/// # fn main() -> Result<(), ganger_fake_llm::FakeLlmError> {
/// let llm = FakeLlm::start(Script::new().text("Hello"))?;
/// assert!(llm.base_url().starts_with("http://127.0.0.1:"));
/// assert!(llm.requests().is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeLlm {
    /// Starts a server on `127.0.0.1` with a free port.
    pub fn start(script: Script) -> Result<FakeLlm, FakeLlmError> {
        FakeLlm::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), script)
    }

    /// Starts a server on `addr` (port 0 picks a free port).
    pub fn start_on(addr: SocketAddr, script: Script) -> Result<FakeLlm, FakeLlmError> {
        let server = BoundServer::bind(addr, script)?;
        let addr = server.local_addr();
        let shared = server.shared();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("fake-llm-{}", addr.port()))
            .spawn(move || {
                // A serve error cannot reach anyone here; requests simply stop arriving and
                // the test's own waits report it.
                let _ = server.serve_until(async {
                    let _ = stopped.await;
                });
            })
            .map_err(|source| FakeLlmError::Serve { source })?;
        Ok(FakeLlm {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL agents are configured with: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        base_url(self.addr)
    }

    /// The server's address without a path, `http://127.0.0.1:PORT`, for agents whose base
    /// URL setting takes the root (Claude Code, Gemini CLI) and for building others.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request recorded so far, in arrival order (inspection requests excluded).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// Model requests in flight per model: now, at most, in all (a witness for limits).
    pub fn in_flight(&self) -> std::collections::BTreeMap<String, crate::witness::InFlight> {
        self.shared.in_flight.snapshot()
    }

    /// Waits until at least `count` requests are recorded and returns them all. A request is
    /// recorded as soon as its answer is decided, so a hanging request counts.
    pub fn wait_for_requests(
        &self,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<RecordedRequest>, FakeLlmError> {
        self.shared
            .wait_for(count, timeout)
            .map_err(|got| FakeLlmError::WaitTimedOut {
                wanted: count,
                got,
                timeout,
            })
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
