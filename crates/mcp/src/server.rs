//! The MCP handler: lists the tools, and runs each call on tokio's blocking pool as one engine
//! call, so that a call that blocks (`wait`, `watch`, a pipeline) holds up nothing else. The
//! engine is opened once the commander is known: named by the configuration, or derived from
//! the client when it connects. The handler is transport-free: `serve_stdio` puts it on
//! stdio, and an HTTP front end can make one per session. A session's subscriptions are tasks
//! of its own that wait on the commander's one reader (`watch.rs`); they end with the session.

use crate::output::Answer;
use crate::watch::Watcher;
use ganger_engine::{Engine, EngineError, StoreLocation};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::Duration;

/// The tools' routes, made once for the process.
static TOOLS: LazyLock<ToolRouter<GangerMcp>> = LazyLock::new(GangerMcp::tool_router);

/// The most resources one session subscribes to.
pub const MAX_SUBSCRIPTIONS: usize = 64;

/// How often a subscription looks whether its session is still there.
const SESSION_CHECK: Duration = Duration::from_secs(2);

/// ganger's MCP server for one repository and one commander.
#[derive(Clone)]
pub struct GangerMcp {
    shared: Arc<Shared>,
}

struct Shared {
    /// Where the repository is.
    dir: PathBuf,
    /// The store the user named (`--store`, `GANGER_STORE`), else the configuration's.
    store: Option<StoreLocation>,
    /// The commander named by the configuration (`--as`, `GANGER_COMMANDER`).
    named: Option<String>,
    /// The engine, opened as the commander once it is known.
    engine: OnceLock<Result<Arc<Engine>, EngineError>>,
    /// The reader of the commander's subscriptions (shared by its sessions over HTTP).
    watcher: OnceLock<Arc<Watcher>>,
    /// The resources subscribed to, each waited on by a task of its own.
    subscriptions: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
}

impl Drop for Shared {
    /// The session ended: so do its subscriptions.
    fn drop(&mut self) {
        let subscriptions = self
            .subscriptions
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        for (_, watch) in subscriptions.drain() {
            watch.abort();
        }
    }
}

impl GangerMcp {
    /// A server for the repository containing `dir`, acting as `commander` when one is named,
    /// else as a name derived from the client that connects.
    pub fn new(dir: PathBuf, store: Option<StoreLocation>, commander: Option<String>) -> GangerMcp {
        GangerMcp {
            shared: Arc::new(Shared {
                dir,
                store,
                named: commander,
                engine: OnceLock::new(),
                watcher: OnceLock::new(),
                subscriptions: Mutex::default(),
            }),
        }
    }

    /// A server over an engine already open (its commander acts), whose subscriptions
    /// `watcher` reads.
    pub fn with_engine(engine: Arc<Engine>, watcher: Arc<Watcher>) -> GangerMcp {
        let shared = Shared {
            dir: engine.workspace().repo.main.clone(),
            store: Some(engine.workspace().store.clone()),
            named: Some(engine.commander().to_owned()),
            engine: OnceLock::new(),
            watcher: OnceLock::new(),
            subscriptions: Mutex::default(),
        };
        let _ = shared.engine.set(Ok(engine));
        let _ = shared.watcher.set(watcher);
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
                Engine::open(&self.shared.dir, self.shared.store.clone(), &name).map(Arc::new)
            })
            .clone()
    }

    /// The reader of the subscriptions, made for `engine` on the first one.
    fn watcher(&self, engine: &Arc<Engine>) -> Arc<Watcher> {
        self.shared
            .watcher
            .get_or_init(|| Watcher::new(engine.clone()))
            .clone()
    }

    /// The engine for a request other than a tool call, as the client that sent it.
    fn engine_for(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Engine>, ErrorData> {
        let client = client_name(&context.meta).or_else(|| {
            context
                .peer
                .peer_info()
                .map(|info| info.client_info.name.clone())
        });
        self.engine(client.as_deref())
            .map_err(|e| ErrorData::internal_error(e.message, None))
    }
}

impl ServerHandler for GangerMcp {
    fn get_info(&self) -> ServerConfig {
        let mut server = Implementation::new("ganger", env!("CARGO_PKG_VERSION"));
        server.title = Some("ganger: a supervisor for AI coding agents".to_owned());
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(capabilities)
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
        Ok(ListToolsResult::with_all_items(crate::tools::tools(&TOOLS)))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let engine = self.engine_for(&context)?;
        let listed = tokio::task::spawn_blocking(move || crate::resources::list(&engine))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(|e| ErrorData::internal_error(e.message, None))?;
        let resources = listed
            .into_iter()
            .map(|(uri, about)| {
                Resource::new(uri.clone(), uri)
                    .with_description(about)
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let engine = self.engine_for(&context)?;
        let uri = request.uri.clone();
        let read = tokio::task::spawn_blocking(move || crate::resources::read(&engine, &uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        match read {
            None => Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            )),
            Some(Err(error)) => Err(ErrorData::resource_not_found(error.message, None)),
            Some(Ok(document)) => {
                let text = serde_json::to_string_pretty(&document).unwrap_or_default();
                let mut contents = ResourceContents::text(text, request.uri);
                if let ResourceContents::TextResourceContents { mime_type, .. } = &mut contents {
                    *mime_type = Some("application/json".to_owned());
                }
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let engine = self.engine_for(&context)?;
        let uri = request.uri;
        {
            let subscriptions = self
                .shared
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if !subscriptions.contains_key(&uri) && subscriptions.len() >= MAX_SUBSCRIPTIONS {
                return Err(ErrorData::invalid_request(
                    format!("a session subscribes to at most {MAX_SUBSCRIPTIONS} resources"),
                    None,
                ));
            }
        }
        // Only ganger's own resources; what the client has now, before the subscription is
        // acknowledged.
        let checked = {
            let (engine, uri) = (engine.clone(), uri.clone());
            tokio::task::spawn_blocking(move || {
                crate::resources::check(&engine, &uri)
                    .map(|()| crate::resources::fingerprint(&engine, &uri))
            })
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        };
        let now = checked.map_err(|message| ErrorData::resource_not_found(message, None))?;
        let mut changes = self.watcher(&engine).watch(&uri, now.clone());
        if *changes.borrow() != now {
            changes.mark_changed();
        }
        let peer = context.peer.clone();
        let watched = uri.clone();
        let watch = tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        changes.borrow_and_update();
                        let updated =
                            rmcp::model::ResourceUpdatedNotificationParam::new(watched.clone());
                        if peer.notify_resource_updated(updated).await.is_err() {
                            break;
                        }
                    }
                    () = tokio::time::sleep(SESSION_CHECK) => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
        });
        let mut subscriptions = self
            .shared
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(old) = subscriptions.insert(uri, watch) {
            old.abort();
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Ok(mut subscriptions) = self.shared.subscriptions.lock()
            && let Some(watch) = subscriptions.remove(&request.uri)
        {
            watch.abort();
        }
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
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
        let server = self.clone();
        let engine = tokio::task::spawn_blocking(move || server.engine(client.as_deref()))
            .await
            .unwrap_or_else(|e| Err(EngineError::invalid(format!("the tool call failed: {e}"))));
        let engine = match engine {
            Ok(engine) => engine,
            Err(error) => return Ok(Answer::failure(&error).into_result().into()),
        };
        let name = request.name.clone();
        if !TOOLS.has_route(&name) {
            let why = format!(
                "no such tool; the tools are {}",
                crate::tools::tool_names().join(", ")
            );
            return Ok(Answer::bad_arguments(&name, &why).into_result().into());
        }
        // The tools take the engine as the commander from here.
        context.extensions.insert(engine);
        let response = TOOLS
            .call(ToolCallContext::new(self, request, context))
            .await?;
        Ok(crate::output::in_our_words(&name, response))
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
