//! The same server over Streamable HTTP, for `ganger serve` to mount at `/mcp`: one service
//! per commander, whose sessions each get a [`GangerMcp`] over that commander's engine (their
//! subscriptions read by one [`Watcher`]), so a supervisor on another machine calls the same
//! tools as one on stdio, as the commander its token names. The front end that mounts it owns
//! authentication, the Host and Origin checks (its guard runs first, so the service's own Host
//! allow-list is left open), and how long a session the client left may live.

use crate::GangerMcp;
use crate::watch::Watcher;
use ganger_engine::Engine;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// The Streamable HTTP service of one commander, and its sessions.
#[derive(Clone)]
pub struct HttpService {
    /// The service (a tower service of HTTP requests).
    pub service: StreamableHttpService<GangerMcp, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    watcher: Arc<Watcher>,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("watcher", &self.watcher)
            .finish_non_exhaustive()
    }
}

impl HttpService {
    /// Ends session `id` (as `DELETE /mcp` does): its subscriptions end with it.
    pub async fn close_session(&self, id: &str) {
        let _ = self.sessions.close_session(&Arc::from(id)).await;
    }

    /// Whether session `id` is open.
    pub async fn has_session(&self, id: &str) -> bool {
        self.sessions.sessions.read().await.contains_key(id)
    }

    /// How many resources the commander's sessions watch.
    pub fn watched(&self) -> usize {
        self.watcher.watched()
    }
}

/// The service that answers MCP over HTTP as `engine`'s commander.
pub fn http_service(engine: Arc<Engine>) -> HttpService {
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(Vec::<String>::new());
    let sessions = Arc::new(LocalSessionManager::default());
    let watcher = Watcher::new(engine.clone());
    let each = watcher.clone();
    let service = StreamableHttpService::new(
        move || Ok(GangerMcp::with_engine(engine.clone(), each.clone())),
        sessions.clone(),
        config,
    );
    HttpService {
        service,
        sessions,
        watcher,
    }
}
