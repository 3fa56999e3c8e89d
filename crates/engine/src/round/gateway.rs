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
    tally: Arc<Mutex<GatewayTally>>,
}

/// What the agent gets instead of the keys: the variables it runs with (each key's variable
/// holding its placeholder, and the base URL's variable when the route is one) and the
/// settings of its configuration table to change.
pub(crate) struct Redirect {
    pub vars: Vec<LoadedKey>,
    pub config: Vec<(Vec<String>, String)>,
}

impl RoundGateway {
    /// What the gateway counted so far.
    pub(crate) fn tally(&self) -> GatewayTally {
        self.counter().now()
    }

    /// A reader of its count, for a warm host that tells each turn its share.
    pub(crate) fn counter(&self) -> GatewayCounter {
        GatewayCounter(self.tally.clone())
    }
}

/// A running gateway's count, read while it serves.
#[derive(Clone)]
pub(crate) struct GatewayCounter(Arc<Mutex<GatewayTally>>);

impl GatewayCounter {
    pub(crate) fn now(&self) -> GatewayTally {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
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

/// Starts the round's gateway, unless the round has no key for the agent's model, the gateway
/// is off, or the agent's route to its model is not known (the `command` agent): then `None`,
/// and the keys go to the agent as before. Keys for anything else (a tool's token) go to the
/// agent either way.
pub(crate) fn open(
    ws: &Workspace,
    store: &dyn ganger_store::Store,
    adapter: &dyn Adapter,
    input: &RoundInput,
    keys: &[LoadedKey],
) -> Result<Option<(RoundGateway, Redirect)>> {
    if keys.is_empty() || !ws.config.gateway.enabled {
        return Ok(None);
    }
    let Some(route) = route(ws, adapter, input.round.model.as_deref()) else {
        return Ok(None);
    };
    let held =
        |key: &&LoadedKey| is_model_key(&route, key) && input.task.keys.contains_key(&key.provider);
    if !keys.iter().any(|key| held(&key)) {
        return Ok(None);
    }
    let upstream = upstream_of(adapter, &route)?;
    let tally = Arc::new(Mutex::new(GatewayTally::default()));
    let sink = {
        let tally = tally.clone();
        Arc::new(move |record: RequestRecord| {
            count(
                &mut tally.lock().unwrap_or_else(|e| e.into_inner()),
                &record,
            );
        })
    };
    let config = GatewayConfig {
        tcp: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        unix: None,
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
    let budget = remaining_tokens(store, input);
    let round = format!("{}#{}", input.task.slug, input.round.number);
    let mut vars = Vec::new();
    let mut placeholders = BTreeMap::new();
    for key in keys {
        let key_file = input.task.keys.get(&key.provider);
        let Some(key_file) = key_file.filter(|_| held(&key)) else {
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
                allow: Vec::new(),
            })
            .map_err(|e| EngineError::environment("the model gateway cannot issue a key", e))?;
        vars.push(LoadedKey {
            provider: key.provider.clone(),
            env: key.env.clone(),
            value: placeholder.clone(),
        });
        placeholders.insert(key.provider.clone(), placeholder);
    }
    let Some(base_url) = gateway.base_url_for(&upstream) else {
        return Ok(None);
    };
    let mut config = Vec::new();
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
    Ok(Some((
        RoundGateway {
            _gateway: gateway,
            tally,
        },
        Redirect { vars, config },
    )))
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
        "connect" => tally.tunnels += 1,
        _ => {
            tally.requests += 1;
            tally.input_tokens += record.tokens.input;
            tally.output_tokens += record.tokens.output;
        }
    }
    tally.bytes_up += record.bytes_up;
    tally.bytes_down += record.bytes_down;
}
