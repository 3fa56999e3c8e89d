//! The same server over Streamable HTTP, for `ganger serve` to mount at `/mcp`: one service
//! per commander, whose sessions each get a [`GangerMcp`] over that commander's engine, so a
//! supervisor on another machine calls the same tools as one on stdio, as the commander its
//! token names. The front end that mounts it owns authentication and the Host and Origin
//! checks (its guard runs first), so the service's own Host allow-list is left open.

use crate::GangerMcp;
use ganger_engine::Engine;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

/// The Streamable HTTP service of one commander.
pub type HttpService = StreamableHttpService<GangerMcp, LocalSessionManager>;

/// The service that answers MCP over HTTP as `engine`'s commander.
pub fn http_service(engine: Arc<Engine>) -> HttpService {
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(Vec::<String>::new());
    StreamableHttpService::new(
        move || Ok(GangerMcp::with_engine(engine.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
