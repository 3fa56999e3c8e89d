//! What every handler shares: an engine per commander that a token acts as (each opened once,
//! as the engine API asks of a long-running process), the tokens, whether the server is bound
//! to loopback, and the live feeds of the board and of tasks. Engine calls block (SQLite,
//! git), so they run on tokio's blocking threads.

use crate::board_feed::BoardFeed;
use crate::mcp_route::McpEndpoint;
use crate::mcp_sessions::SessionBook;
use crate::problem::{ApiError, ApiResult};
use crate::task_feed::TaskFeeds;
use crate::tokens::{Grant, Tokens};
use ganger_engine::{Engine, EngineError};
use std::collections::HashMap;
use std::sync::Arc;

/// The server's shared state.
pub struct AppState {
    engines: HashMap<String, Arc<Engine>>,
    /// The engine of the commander `serve` runs as: reads that name nobody use it.
    pub owner: Arc<Engine>,
    pub tokens: Tokens,
    /// Whether the Host header must name this machine (bound to a loopback address).
    pub check_host: bool,
    pub board: Arc<BoardFeed>,
    /// The rounds of tasks that clients follow.
    pub task_feeds: Arc<TaskFeeds>,
    /// The MCP server over Streamable HTTP (`/mcp`), one per commander a token names.
    pub mcp: HashMap<String, McpEndpoint>,
}

impl AppState {
    /// Opens one engine per commander named by a token.
    pub fn new(
        owner: Arc<Engine>,
        tokens: Tokens,
        check_host: bool,
        board: Arc<BoardFeed>,
        task_feeds: Arc<TaskFeeds>,
    ) -> Result<AppState, EngineError> {
        let mut engines = HashMap::new();
        engines.insert(owner.commander().to_owned(), owner.clone());
        for name in tokens.commanders() {
            if let std::collections::hash_map::Entry::Vacant(entry) = engines.entry(name) {
                let engine = Engine::open(
                    &owner.workspace().repo.main,
                    Some(owner.workspace().store.clone()),
                    entry.key(),
                )?;
                entry.insert(Arc::new(engine));
            }
        }
        let mcp = engines
            .iter()
            .map(|(name, engine)| {
                let endpoint = McpEndpoint {
                    service: ganger_mcp::http_service(engine.clone()),
                    sessions: Arc::new(SessionBook::default()),
                };
                (name.clone(), endpoint)
            })
            .collect();
        Ok(AppState {
            mcp,
            engines,
            owner,
            tokens,
            check_host,
            board,
            task_feeds,
        })
    }

    /// The engine that acts as the token's commander.
    pub fn engine_for(&self, grant: &Grant) -> ApiResult<Arc<Engine>> {
        self.engines
            .get(&grant.commander)
            .cloned()
            .ok_or_else(|| ApiError::internal(format!("no engine for {}", grant.commander)))
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("owner", &self.owner.commander())
            .field("check_host", &self.check_host)
            .finish_non_exhaustive()
    }
}

/// Runs a blocking engine call on a blocking thread.
pub async fn blocking<T: Send + 'static>(
    engine: Arc<Engine>,
    call: impl FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(move || call(&engine))
        .await
        .map_err(|e| ApiError::internal(format!("an engine call failed: {e}")))?
        .map_err(ApiError::from)
}
