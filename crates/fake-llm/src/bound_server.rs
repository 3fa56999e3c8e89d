//! Binding and serving, split in two steps so that the caller learns the address (and can
//! print it) between them: the library itself never prints.

use std::future::Future;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use crate::error::FakeLlmError;
use crate::script::Script;
use crate::script_check::compile;
use crate::server::{Shared, router};

/// A fake model server that is listening but not yet answering.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ganger_fake_llm::{BoundServer, Script};
/// let server = BoundServer::bind("127.0.0.1:0".parse()?, Script::builtin())?;
/// let base_url = server.base_url(); // the caller prints this
/// server.serve()?; // blocks for good
/// # let _ = base_url;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct BoundServer {
    listener: TcpListener,
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl BoundServer {
    /// Checks the script and binds `addr` (port 0 picks a free port). Connections that arrive
    /// before [`BoundServer::serve`] wait in the listen queue.
    pub fn bind(addr: SocketAddr, script: Script) -> Result<BoundServer, FakeLlmError> {
        let checked = compile(script)?;
        let bind_error = |source| FakeLlmError::Bind { addr, source };
        let listener = TcpListener::bind(addr).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        Ok(BoundServer {
            listener,
            addr,
            shared: Arc::new(Shared::new(checked)),
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL agents are configured with: `http://ADDR/v1`.
    pub fn base_url(&self) -> String {
        base_url(self.addr)
    }

    /// Serves on the calling thread, on a runtime of its own, until the process ends.
    pub fn serve(self) -> Result<(), FakeLlmError> {
        self.serve_until(std::future::pending())
    }

    pub(crate) fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    /// Serves until `stop` completes; then every open connection (hanging ones included) is
    /// dropped with the runtime.
    pub(crate) fn serve_until(self, stop: impl Future<Output = ()>) -> Result<(), FakeLlmError> {
        let serve_error = |source| FakeLlmError::Serve { source };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(serve_error)?;
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::from_std(self.listener).map_err(serve_error)?;
            let app = router(self.shared);
            tokio::select! {
                served = axum::serve(listener, app) => served.map_err(serve_error),
                () = stop => Ok(()),
            }
        })
    }
}

/// `http://ADDR/v1`.
pub(crate) fn base_url(addr: SocketAddr) -> String {
    format!("http://{addr}/v1")
}
