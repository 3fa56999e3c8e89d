//! The server: binds first (so a refused or taken address fails `serve` before anything
//! runs), then serves the API, the events and the page on a thread of its own with its own
//! tokio runtime, beside the scheduler that `serve` runs on its main thread. One process
//! schedules and serves, so the server holds what it may within a share of the process's
//! descriptors (`connections.rs`) and leaves the scheduler the rest.

use crate::board_feed::BoardFeed;
use crate::connections::Limits;
use crate::listen::{Listen, check_listen, is_loopback};
use crate::state::AppState;
use crate::task_feed::TaskFeeds;
use crate::tokens::Tokens;
use axum::Router;
use axum::routing::get;
use ganger_engine::Engine;
use std::net::SocketAddr;
use std::sync::Arc;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What `serve --listen` was asked.
#[derive(Debug, Clone)]
pub struct WebOptions {
    pub listen: Listen,
}

/// A running server.
#[derive(Debug)]
pub struct WebServer {
    /// Where it listens (the port chosen when asked for port 0).
    pub address: Listen,
    /// Where the owner's token is (never printed).
    pub token_file: std::path::PathBuf,
    board: Arc<BoardFeed>,
    task_feeds: Arc<TaskFeeds>,
}

impl WebServer {
    /// Stops the readers of the board and of tasks (the server stops with the process).
    pub fn stop(&self) {
        self.board.stop();
        self.task_feeds.stop();
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Every route: the API's from their handlers' annotations, each path written once there.
pub fn router(state: Arc<AppState>) -> Router {
    use crate::{events_board, events_task, routes_actions as act, routes_read as read};
    let (api, openapi) = OpenApiRouter::with_openapi(crate::openapi::ApiDoc::openapi())
        .routes(routes!(read::list_tasks, act::start))
        .routes(routes!(read::get_task))
        .routes(routes!(read::task_report))
        .routes(routes!(read::task_checks))
        .routes(routes!(read::task_diff))
        .routes(routes!(events_task::task_events))
        .routes(routes!(read::list_rounds))
        .routes(routes!(read::get_round))
        .routes(routes!(read::round_events))
        .routes(routes!(read::round_diff))
        .routes(routes!(act::fix))
        .routes(routes!(act::cancel))
        .routes(routes!(act::approve))
        .routes(routes!(act::reject))
        .routes(routes!(act::merge))
        .routes(routes!(act::transfer))
        .routes(routes!(crate::routes_races::race))
        .routes(routes!(crate::routes_races::get_race))
        .routes(routes!(
            crate::routes_land::land_status,
            crate::routes_land::land
        ))
        .routes(routes!(crate::routes_land::conflicts))
        .routes(routes!(read::all_rounds))
        .routes(routes!(read::journal))
        .routes(routes!(read::fleets))
        .routes(routes!(read::fleet))
        .routes(routes!(read::queue))
        .routes(routes!(read::workers))
        .routes(routes!(read::whoami))
        .routes(routes!(events_board::board_events))
        .split_for_parts();
    let openapi = Arc::new(openapi);
    api.route("/", get(crate::dashboard::index))
        .route("/assets/{name}", get(crate::dashboard::asset))
        .route(
            "/api/openapi.json",
            get(move || std::future::ready(axum::Json(openapi.clone()))),
        )
        .route("/mcp", axum::routing::any(crate::mcp_route::mcp))
        .fallback(|| async { crate::problem::ApiError::not_found("no such path") })
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            crate::problem::ApiError::method_not_allowed(format!(
                "this path does not take {method}"
            ))
        })
        .layer(axum::middleware::from_fn(crate::bounded_body::bounded_body))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::guard::guard,
        ))
        .with_state(state)
}

/// Binds `options.listen` and serves on a thread of its own.
pub fn start(engine: Arc<Engine>, options: &WebOptions) -> Result<WebServer, String> {
    let web_dir = engine.workspace().state.root().join("web");
    engine
        .workspace()
        .ensure_state_dir()
        .map_err(|e| e.message)?;
    let tokens = Tokens::load(&web_dir, engine.commander())?;
    let token_file = tokens.owner_token_file.clone();
    let (listener, address) = match &options.listen {
        Listen::Tcp(addr) => {
            check_listen(addr, tokens.configured)?;
            let (listener, bound) = bind_tcp(*addr)?;
            (Bound::Tcp(listener), Listen::Tcp(bound))
        }
        Listen::Unix(path) => (Bound::Unix(bind_unix(path)?), options.listen.clone()),
    };
    // On loopback the Host header must name this machine (the bound address among them); a
    // unix socket is out of a browser's reach, and elsewhere tokens were configured on
    // purpose.
    let check_host = matches!(&address, Listen::Tcp(addr) if is_loopback(addr));
    let limits = Limits::of_this_process();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(limits.blocking_threads)
        .enable_all()
        .thread_name("ganger-web")
        .build()
        .map_err(|e| format!("cannot start the web server's runtime: {e}"))?;
    let board = BoardFeed::start(engine.clone());
    let task_feeds = TaskFeeds::start(engine.clone());
    let state = Arc::new(
        AppState::new(
            engine,
            tokens,
            check_host,
            board.clone(),
            task_feeds.clone(),
        )
        .map_err(|e| e.message)?,
    );
    let app = router(state.clone());
    std::thread::Builder::new()
        .name("ganger-web".into())
        .spawn(move || {
            runtime.block_on(async move {
                tokio::spawn(crate::mcp_route::reap_sessions(state));
                match listener {
                    Bound::Tcp(listener) => {
                        if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                            crate::connections::serve(listener, app, limits).await;
                        }
                    }
                    Bound::Unix(listener) => {
                        if let Ok(listener) = tokio::net::UnixListener::from_std(listener) {
                            crate::connections::serve(listener, app, limits).await;
                        }
                    }
                }
            });
        })
        .map_err(|e| format!("cannot start the web server's thread: {e}"))?;
    Ok(WebServer {
        address,
        token_file,
        board,
        task_feeds,
    })
}

/// A bound listener, before the runtime takes it.
enum Bound {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

fn bind_tcp(addr: SocketAddr) -> Result<(std::net::TcpListener, SocketAddr), String> {
    let failed = |e: std::io::Error| format!("cannot listen on {addr}: {e}");
    let listener = std::net::TcpListener::bind(addr).map_err(failed)?;
    listener.set_nonblocking(true).map_err(failed)?;
    let bound = listener.local_addr().map_err(failed)?;
    Ok((listener, bound))
}

/// Binds a unix socket readable and writable by its owner only. A socket file left by a
/// server that is gone is replaced; one that answers is in use, and refused.
fn bind_unix(path: &std::path::Path) -> Result<std::os::unix::net::UnixListener, String> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let failed = |e: std::io::Error| format!("cannot listen on unix:{}: {e}", path.display());
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(format!(
                "cannot listen on unix:{}: it exists and is not a socket",
                path.display()
            ));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(format!(
                "cannot listen on unix:{}: another server answers there",
                path.display()
            ));
        }
        std::fs::remove_file(path).map_err(failed)?;
    }
    let listener = std::os::unix::net::UnixListener::bind(path).map_err(failed)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
    listener.set_nonblocking(true).map_err(failed)?;
    Ok(listener)
}
