//! The model gateway of one round (docs/gateway.md): started by the round host when the
//! round has keys and the agent's route to its model is known, it hands the agent a
//! placeholder for each key and its own URL in place of the agent's base URL, swaps the real
//! key in for each request and counts what passes. It ends with the round; the tally goes in
//! the round's summary beside what the agent reported.

use crate::base::error::{EngineError, Result};
use crate::env::keys::LoadedKey;
use crate::env::workspace::Workspace;
use crate::round::RoundInput;
use ganger_agents::{Adapter, RouteSetting};
use ganger_events::{GatewayTally, KEPT_MESSAGES};
use ganger_gateway::{
    Gateway, GatewayConfig, Grant, Grants, Limits, RequestRecord, TlsRoots, Upstream,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A round's gateway, running until dropped.
pub(crate) struct RoundGateway {
    _gateway: Gateway,
    /// Dropped after the gateway, which removes its socket first.
    _door_dir: Option<DoorDir>,
    tally: Arc<Mutex<GatewayTally>>,
    log: RequestLog,
}

/// Where the gateway writes each request's record: the round's gateway stream, while there
/// is one (a warm host's changes with each turn).
type RequestLog = Arc<Mutex<Option<Box<dyn std::io::Write + Send>>>>;

/// What the agent gets instead of the keys: the variables it runs with (each key's variable
/// holding its placeholder, and the base URL's variable when the route is one) and the
/// settings of its configuration table to change.
pub(crate) struct Redirect {
    pub vars: Vec<LoadedKey>,
    pub config: Vec<(Vec<String>, String)>,
    /// The gateway's socket and port, for a sandbox whose only way out is the gateway.
    pub door: Option<ganger_sandbox::GatewayDoor>,
}

impl RoundGateway {
    /// What the gateway counted so far.
    pub(crate) fn tally(&self) -> GatewayTally {
        self.counter().now()
    }

    /// A reader of its count, for a warm host that tells each turn its share.
    pub(crate) fn counter(&self) -> GatewayCounter {
        GatewayCounter {
            tally: self.tally.clone(),
            log: self.log.clone(),
        }
    }
}

/// A running gateway's count, read while it serves, and where its records go.
#[derive(Clone)]
pub(crate) struct GatewayCounter {
    tally: Arc<Mutex<GatewayTally>>,
    log: RequestLog,
}

impl GatewayCounter {
    pub(crate) fn now(&self) -> GatewayTally {
        self.tally.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sends the records from now on to `round`'s gateway stream (a warm host's turn), or
    /// nowhere with `None`.
    pub(crate) fn log_to(
        &self,
        store: Option<(&dyn ganger_store::Backend, &ganger_store::RoundStream)>,
    ) {
        let stream = store.and_then(|(store, stream)| store.create_stream(stream).ok());
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = stream;
    }
}

/// The roots upstream certificates may chain to: the system's and `[gateway] ca`'s, checked.
pub(crate) fn roots(ws: &Workspace) -> Result<TlsRoots> {
    let roots = TlsRoots {
        ca: ws
            .config
            .gateway
            .ca
            .as_ref()
            .map(|ca| ws.repo.main.join(ca)),
        without_system: false,
    };
    roots
        .check()
        .map_err(|e| EngineError::invalid(format!("[gateway] ca: {e}")))?;
    Ok(roots)
}

/// Whether `key` is the one the agent sends its model: the route's provider's, or the one in
/// the variable the agent reads its model key from.
fn is_model_key(route: &ganger_agents::ModelRoute, key: &LoadedKey) -> bool {
    route.provider == key.provider || route.key_env.as_deref() == Some(key.env.as_str())
}

fn route(
    ws: &Workspace,
    adapter: &dyn Adapter,
    model: Option<&str>,
) -> Option<ganger_agents::ModelRoute> {
    let env = crate::env::agent_env::request_env(adapter, &ws.config, &[]);
    let overlay = crate::env::agent_env::config_overlay(adapter, &ws.config);
    adapter.model_route(&env, overlay.as_ref(), model)
}

/// Checks, before anything is made, what the gateway will need for a round of `adapter` with
/// `keys`: `[gateway] ca`, and the agent's model endpoint (an `https` URL, or `http` to this
/// machine). Bad input either way.
pub(crate) fn check(
    ws: &Workspace,
    adapter: &dyn Adapter,
    model: Option<&str>,
    keys: &[LoadedKey],
) -> Result<()> {
    if keys.is_empty() || !ws.config.gateway.enabled {
        return Ok(());
    }
    roots(ws)?;
    let Some(route) = route(ws, adapter, model) else {
        return Ok(());
    };
    if keys.iter().any(|key| is_model_key(&route, key)) {
        upstream_of(adapter, &route)?;
    }
    Ok(())
}

fn upstream_of(adapter: &dyn Adapter, route: &ganger_agents::ModelRoute) -> Result<Upstream> {
    Upstream::parse(&route.upstream).map_err(|e| {
        EngineError::invalid(format!(
            "{}'s model endpoint: {e} (or set [gateway] enabled = false)",
            adapter.display_name()
        ))
    })
}

/// Whether the round's only way out is its gateway: a sandbox's `gateway` network.
fn sealed(ws: &Workspace, input: &RoundInput) -> bool {
    input.task.network == ganger_sandbox::Network::Gateway
        && crate::env::sandboxing::isolated(ws, &input.task)
}

/// Starts the round's gateway when the round needs one: its agent's model key is to be held
/// back (the gateway on, the agent's route to its model known), or its sandbox's only way out
/// is the gateway (`--network gateway`: then also for a round without keys, whose agent's own
/// credentials pass through, and for an agent whose model route is not known, which gets the
/// proxy only). Otherwise `None`, and the keys go to the agent as before. Keys for anything
/// else (a tool's token) go to the agent either way.
///
/// With `log_requests`, every request's record also goes to the round's gateway stream in
/// the store, one JSON line each (`ganger log SLUG --gateway`); a warm agent's host, whose
/// gateway outlives its rounds, counts each turn's share instead.
pub(crate) fn open(
    ws: &Workspace,
    store: &dyn ganger_store::Backend,
    adapter: &dyn Adapter,
    input: &RoundInput,
    keys: &[LoadedKey],
    log_requests: bool,
) -> Result<Option<(RoundGateway, Redirect)>> {
    let sealed = sealed(ws, input);
    let enabled = ws.config.gateway.enabled;
    if !sealed && (keys.is_empty() || !enabled) {
        return Ok(None);
    }
    let route = route(ws, adapter, input.round.model.as_deref());
    let held = |key: &&LoadedKey| {
        enabled
            && route.as_ref().is_some_and(|route| is_model_key(route, key))
            && input.task.keys.contains_key(&key.provider)
    };
    let keyed = keys.iter().any(|key| held(&key));
    if !keyed && !sealed {
        return Ok(None);
    }
    let upstream = route
        .as_ref()
        .map(|route| upstream_of(adapter, route))
        .transpose()?;
    let Started {
        gateway,
        door_dir,
        tally,
        log,
    } = start(
        ws,
        input,
        sealed,
        log_requests
            .then(|| store.create_stream(&log_stream(input)))
            .transpose()?,
    )?;
    let budget = remaining_tokens(store, input);
    let round = format!("{}#{}", input.task.slug, input.round.number);
    let allow = crate::env::sandboxing::allow_list(ws, &input.task.allow)?;
    let issued = |error| EngineError::environment("the model gateway cannot issue a key", error);
    let mut vars = Vec::new();
    let mut placeholders = BTreeMap::new();
    for key in keys {
        let key_file = input.task.keys.get(&key.provider);
        let (Some(key_file), Some(upstream)) = (key_file.filter(|_| held(&key)), &upstream) else {
            // A key for something else (a tool's token) goes to the agent as before.
            vars.push(key.clone());
            continue;
        };
        let placeholder = gateway
            .grants()
            .issue(Grant {
                round: round.clone(),
                provider: key.provider.clone(),
                upstream: Some(upstream.clone()),
                key_file: Some(key_file.clone()),
                budget_tokens: budget,
                allow: allow.clone(),
            })
            .map_err(issued)?;
        vars.push(LoadedKey {
            provider: key.provider.clone(),
            env: key.env.clone(),
            value: placeholder.clone(),
        });
        placeholders.insert(key.provider.clone(), placeholder);
    }
    let Some(port) = gateway.addr().map(|addr| addr.port()) else {
        return Ok(None);
    };
    let mut config = Vec::new();
    if sealed {
        // What reaches the gateway without a placeholder is this round's, sent on as it came.
        gateway
            .grants()
            .issue_fallback(Grant {
                round: round.clone(),
                provider: route
                    .as_ref()
                    .map_or("none", |r| r.provider.as_str())
                    .to_owned(),
                upstream: upstream.clone(),
                key_file: None,
                budget_tokens: budget,
                allow,
            })
            .map_err(issued)?;
        proxy_vars(port, &mut vars);
    }
    if let (Some(route), Some(upstream)) = (&route, &upstream) {
        let base_url = format!("http://127.0.0.1:{port}{}", upstream.path);
        set(&route.base_url, &base_url, &mut vars, &mut config);
        // The key the agent's configuration names: the route's provider's, else the only one.
        let named = placeholders.get(&route.provider).or_else(|| {
            (placeholders.len() == 1)
                .then(|| placeholders.values().next())
                .flatten()
        });
        if let (Some(setting), Some(placeholder)) = (&route.key, named) {
            set(setting, placeholder, &mut vars, &mut config);
        }
    }
    let started = Started {
        gateway,
        door_dir,
        tally,
        log,
    };
    Ok(Some(started.handed(port, vars, config)))
}

/// A gateway just started, with what the round keeps of it.
struct Started {
    gateway: Gateway,
    door_dir: Option<DoorDir>,
    tally: Arc<Mutex<GatewayTally>>,
    log: RequestLog,
}

impl Started {
    /// The round's gateway, and what the agent (or check) gets instead: `vars`, the settings
    /// of `config`, and the door into its sandbox when the gateway has a socket.
    fn handed(
        self,
        port: u16,
        vars: Vec<LoadedKey>,
        config: Vec<(Vec<String>, String)>,
    ) -> (RoundGateway, Redirect) {
        let door = self
            .door_dir
            .as_ref()
            .map(|dir| ganger_sandbox::GatewayDoor {
                socket: dir.socket(),
                port,
            });
        let gateway = RoundGateway {
            _gateway: self.gateway,
            _door_dir: self.door_dir,
            tally: self.tally,
            log: self.log,
        };
        (gateway, Redirect { vars, config, door })
    }
}

/// Starts a gateway for `input`'s round: on loopback, and with `sealed` also on a socket in a
/// private directory (the sandbox's way out); its records counted, and written to `log` (the
/// round's gateway stream) when there is one.
fn start(
    ws: &Workspace,
    input: &RoundInput,
    sealed: bool,
    log: Option<Box<dyn std::io::Write + Send>>,
) -> Result<Started> {
    let tally = Arc::new(Mutex::new(GatewayTally::default()));
    let log: RequestLog = Arc::new(Mutex::new(log));
    let sink = {
        let tally = tally.clone();
        let log = log.clone();
        Arc::new(move |record: RequestRecord| {
            if let Some(log) = log.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                write_record(&mut **log, &record);
            }
            count(
                &mut tally.lock().unwrap_or_else(|e| e.into_inner()),
                &record,
            );
        })
    };
    let door_dir = sealed
        .then(|| DoorDir::make(&input.round.token))
        .transpose()?;
    let config = GatewayConfig {
        tcp: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        unix: door_dir.as_ref().map(DoorDir::socket),
        roots: roots(ws)?,
        limits: Limits::default(),
        sink,
    };
    let gateway = Gateway::start(config, Grants::new()).map_err(|e| {
        if e.is_invalid() {
            EngineError::invalid(e.to_string())
        } else {
            EngineError::environment("the model gateway cannot start", e)
        }
    })?;
    Ok(Started {
        gateway,
        door_dir,
        tally,
        log,
    })
}

/// A gateway for the checks of a round whose only way out is its gateway: the proxy to the
/// allow-list and nothing else (a check has no model to reach). `None` for any other round.
pub(crate) fn open_for_checks(
    ws: &Workspace,
    input: &RoundInput,
) -> Result<Option<(RoundGateway, Redirect)>> {
    if !sealed(ws, input) {
        return Ok(None);
    }
    let Started {
        gateway,
        door_dir,
        tally,
        log,
    } = start(ws, input, true, None)?;
    let Some(port) = gateway.addr().map(|addr| addr.port()) else {
        return Ok(None);
    };
    gateway
        .grants()
        .issue_fallback(Grant {
            round: format!("{}#{} checks", input.task.slug, input.round.number),
            provider: "none".to_owned(),
            upstream: None,
            key_file: None,
            budget_tokens: None,
            allow: crate::env::sandboxing::allow_list(ws, &input.task.allow)?,
        })
        .map_err(|e| EngineError::environment("the model gateway cannot issue a key", e))?;
    let mut vars = Vec::new();
    proxy_vars(port, &mut vars);
    let started = Started {
        gateway,
        door_dir,
        tally,
        log,
    };
    Ok(Some(started.handed(port, vars, Vec::new())))
}

/// The proxy a sealed round's tools use for everything but the gateway itself (the relay in
/// its sandbox listens on the gateway's port).
fn proxy_vars(port: u16, vars: &mut Vec<LoadedKey>) {
    let proxy = format!("http://127.0.0.1:{port}");
    let direct = "127.0.0.1,localhost,::1".to_owned();
    for (name, value) in [
        ("HTTPS_PROXY", &proxy),
        ("https_proxy", &proxy),
        ("HTTP_PROXY", &proxy),
        ("http_proxy", &proxy),
        ("ALL_PROXY", &proxy),
        ("NO_PROXY", &direct),
        ("no_proxy", &direct),
    ] {
        vars.push(LoadedKey {
            provider: "gateway".to_owned(),
            env: name.to_owned(),
            value: value.clone(),
        });
    }
}

/// A private directory for the gateway's socket, removed with the round's gateway.
struct DoorDir(std::path::PathBuf);

impl DoorDir {
    fn make(token: &str) -> Result<DoorDir> {
        use std::os::unix::fs::DirBuilderExt;
        let short: String = token
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(40)
            .collect();
        let dir = std::env::temp_dir().join(format!("ganger-gateway-{short}"));
        if dir.is_dir() {
            // Left by a round host that died; its socket is dead too.
            let _ = std::fs::remove_dir_all(&dir);
        }
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| EngineError::io("create", &dir, e))?;
        Ok(DoorDir(dir))
    }

    fn socket(&self) -> std::path::PathBuf {
        self.0.join("socket")
    }
}

impl Drop for DoorDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn set(
    setting: &RouteSetting,
    value: &str,
    vars: &mut Vec<LoadedKey>,
    config: &mut Vec<(Vec<String>, String)>,
) {
    match setting {
        RouteSetting::Env(name) => vars.push(LoadedKey {
            provider: "gateway".to_owned(),
            env: name.clone(),
            value: value.to_owned(),
        }),
        RouteSetting::Config(path) => config.push((path.clone(), value.to_owned())),
    }
}

/// The tokens the task may still spend, when it has a token budget.
fn remaining_tokens(store: &dyn ganger_store::Store, input: &RoundInput) -> Option<u64> {
    let limit = store.task_budget(input.task.id).ok()?.tokens?;
    let spent = store
        .task_spent(input.task.id, Some(input.round.id))
        .map_or(0, |spent| spent.tokens);
    Some(limit.saturating_sub(spent))
}

/// The gateway stream of `input`'s round.
pub(crate) fn log_stream(input: &RoundInput) -> ganger_store::RoundStream {
    ganger_store::RoundStream::of(&input.task, &input.round, ganger_store::StreamKind::Gateway)
}

/// One line of the round's gateway stream: the record (which holds no key, placeholder or
/// query) and when it ended, in Unix ms.
fn write_record(log: &mut dyn std::io::Write, record: &RequestRecord) {
    let mut line = serde_json::to_value(record).unwrap_or_default();
    line["at"] = serde_json::json!(ganger_store::now_ms());
    if let Ok(mut text) = serde_json::to_vec(&line) {
        text.push(b'\n');
        // A store that cannot take the line loses the record, not the round.
        let _ = log.write_all(&text);
    }
}

fn count(tally: &mut GatewayTally, record: &RequestRecord) {
    if let Some(why) = &record.refused {
        tally.refused_count += 1;
        if tally.refused.len() < KEPT_MESSAGES {
            tally.refused.push(format!(
                "{} {}{}: {why}",
                record.method, record.host, record.path
            ));
        }
        return;
    }
    if record.status == 429 {
        tally.rate_limited += 1;
        tally.retry_after_ms = tally.retry_after_ms.max(record.retry_after_ms);
    }
    match record.kind {
        "connect" | "proxy" => tally.tunnels += 1,
        _ => {
            tally.requests += 1;
            tally.input_tokens += record.tokens.input;
            tally.output_tokens += record.tokens.output;
        }
    }
    tally.bytes_up += record.bytes_up;
    tally.bytes_down += record.bytes_down;
}
