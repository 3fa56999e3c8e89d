//! The MCP handler: lists the tools, and runs each call on tokio's blocking pool as one engine
//! call, so that a call that blocks (`wait`, `watch`, a pipeline) holds up nothing else. The
//! engine is opened once the commander is known: named by the configuration, or derived from
//! the client when it connects. The handler is transport-free: `serve_stdio` puts it on
//! stdio, and an HTTP front end can make one per session.

use crate::calls;
use crate::output::Answer;
use ganger_engine::{Engine, EngineError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// ganger's MCP server for one repository and one commander.
#[derive(Clone)]
pub struct GangerMcp {
    shared: Arc<Shared>,
}

struct Shared {
    /// Where the repository is.
    dir: PathBuf,
    /// The commander named by the configuration (`--as`, `GANGER_COMMANDER`).
    named: Option<String>,
    /// The engine, opened as the commander once it is known.
    engine: OnceLock<Result<Arc<Engine>, EngineError>>,
}

impl GangerMcp {
    /// A server for the repository containing `dir`, acting as `commander` when one is named,
    /// else as a name derived from the client that connects.
    pub fn new(dir: PathBuf, commander: Option<String>) -> GangerMcp {
        GangerMcp {
            shared: Arc::new(Shared {
                dir,
                named: commander,
                engine: OnceLock::new(),
            }),
        }
    }

    /// A server over an engine already open (its commander acts).
    pub fn with_engine(engine: Arc<Engine>) -> GangerMcp {
        let shared = Shared {
            dir: engine.workspace().repo.main.clone(),
            named: Some(engine.commander().to_owned()),
            engine: OnceLock::new(),
        };
        let _ = shared.engine.set(Ok(engine));
        GangerMcp {
            shared: Arc::new(shared),
        }
    }

    /// The engine, opened as the named commander, else as `client`'s name.
    fn engine(&self, client: Option<&str>) -> Result<Arc<Engine>, EngineError> {
        self.shared
            .engine
            .get_or_init(|| {
                let name = match (&self.shared.named, client) {
                    (Some(name), _) => name.clone(),
                    (None, Some(client)) => crate::identity::commander_from_client(client),
                    (None, None) => "mcp".to_owned(),
                };
                Engine::open(&self.shared.dir, &name).map(Arc::new)
            })
            .clone()
    }

    /// Runs one tool call to its answer (blocking: call it off the async threads).
    pub fn call_blocking(&self, name: &str, arguments: Value, client: Option<&str>) -> Answer {
        match self.engine(client) {
            Ok(engine) => calls::call(&engine, name, arguments),
            Err(error) => Answer::failure(&error),
        }
    }
}

impl ServerHandler for GangerMcp {
    fn get_info(&self) -> ServerConfig {
        let mut server = Implementation::new("ganger", env!("CARGO_PKG_VERSION"));
        server.title = Some("ganger: a supervisor for AI coding agents".to_owned());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(server)
            .with_instructions(crate::instructions::SUPERVISE_LOOP)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        // The commander is fixed now: a failure to open shows on the first tool call.
        let _ = self.engine(Some(&request.client_info.name));
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(crate::catalog::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The client names itself in `initialize`, or (protocol 2026-07-28, without one) in
        // each request's `_meta`.
        let client = [request.meta.as_ref(), Some(&context.meta)]
            .into_iter()
            .flatten()
            .find_map(client_name)
            .or_else(|| {
                context
                    .peer
                    .peer_info()
                    .map(|info| info.client_info.name.clone())
            });
        let name = request.name.into_owned();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let answer = tokio::task::spawn_blocking(move || {
            server.call_blocking(&name, arguments, client.as_deref())
        })
        .await
        .unwrap_or_else(|e| {
            Answer::failure(&EngineError::invalid(format!("the tool call failed: {e}")))
        });
        Ok(answer.into_result().into())
    }
}

/// The client's name in a request's `_meta` (`io.modelcontextprotocol/clientInfo`).
fn client_name(meta: &rmcp::model::RequestMetaObject) -> Option<String> {
    meta.0
        .get("io.modelcontextprotocol/clientInfo")?
        .get("name")?
        .as_str()
        .map(str::to_owned)
}
