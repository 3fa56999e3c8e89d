//! Checking a model before anything is created. An agent with a catalog lists what it can use
//! (the arguments its facts give, `models_args`), which takes seconds (5.7 s measured:
//! docs/design.md, Agents), so the list is cached
//! in `.ganger/cache/` per agent, program (path, size, modification time: its version) and
//! configuration (the variables and files that change what it offers, and `ganger.toml`'s
//! settings for it), for `defaults.models_cache`. A model missing from a cached list is looked
//! up once more in a fresh list before it is declared missing. A model that the agent's
//! settings in `ganger.toml` define themselves (`Adapter::configured_models`) is available
//! without a list: the agent lists it whatever else it offers.

use crate::base::error::Result;
use crate::env::agent_env;
use crate::env::workspace::Workspace;
use ganger_agents::{Adapter, ConfigFile};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long listing the models may take.
const LIST_LIMIT: Duration = Duration::from_secs(120);

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCheck {
    /// The model is in the agent's list.
    Available,
    /// The model was not checked, and why.
    Unchecked(String),
    /// The model is not in the list; the closest one that is.
    Missing { closest: Option<String> },
}

impl ModelCheck {
    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        match self {
            ModelCheck::Available => "available".into(),
            ModelCheck::Unchecked(why) => format!("not checked: {why}"),
            ModelCheck::Missing { closest: Some(c) } => {
                format!("not available; the closest available model is {c}")
            }
            ModelCheck::Missing { closest: None } => "not available".into(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct CachedList {
    created_ms: i64,
    models: Vec<String>,
}

/// A stable 64-bit FNV-1a hasher: cache file names must not change between builds.
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

fn file_identity(path: &Path, hasher: &mut Fnv) {
    path.hash(hasher);
    if let Ok(meta) = std::fs::metadata(path) {
        meta.len().hash(hasher);
        if let Ok(modified) = meta.modified() {
            modified.hash(hasher);
        }
    }
}

/// The cache key of the agent's model list.
fn cache_key(ws: &Workspace, adapter: &dyn Adapter, program: &Path) -> String {
    format!(
        "models-{}-{:016x}.json",
        adapter.name(),
        agent_digest(ws, adapter, program, &[])
    )
}

/// A digest of the agent as installed and configured here, stable between builds: its name,
/// its program (path, size, modification time: its version), the variables and files that
/// change what it does, `ganger.toml`'s settings for it, and `context` (what else the caller's
/// question depends on). Equal digests, the same agent.
pub(crate) fn agent_digest(
    ws: &Workspace,
    adapter: &dyn Adapter,
    program: &Path,
    context: &[&str],
) -> u64 {
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    adapter.name().hash(&mut hasher);
    context.hash(&mut hasher);
    file_identity(
        &program
            .canonicalize()
            .unwrap_or_else(|_| program.to_path_buf()),
        &mut hasher,
    );
    let agent_config = ws.config.agent(adapter.name());
    for var in adapter.config_env() {
        var.hash(&mut hasher);
        agent_config
            .env
            .get(*var)
            .cloned()
            .or_else(|| std::env::var(var).ok())
            .hash(&mut hasher);
    }
    agent_config.env.hash(&mut hasher);
    if let Some(overlay) = agent_env::config_overlay(adapter, &ws.config) {
        overlay.to_string().hash(&mut hasher);
    }
    // The agent's own configuration files, global and in the repository.
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    for file in adapter.facts().config_files {
        let path = match file {
            ConfigFile::InHome(path) => home.join(path),
            ConfigFile::InRepo(path) => ws.repo.main.join(path),
        };
        file_identity(&path, &mut hasher);
    }
    hasher.finish()
}

fn list_models(
    ws: &Workspace,
    adapter: &dyn Adapter,
    program: &Path,
    args: &[&str],
) -> Result<Vec<String>> {
    let stdout =
        crate::env::agent_query::ask(ws, adapter, program, args, &ws.repo.main, LIST_LIMIT)?;
    Ok(adapter.parse_models(&stdout))
}

/// Checks `model` against the agent's list, using and refreshing the cache.
pub fn check_model(
    ws: &Workspace,
    adapter: &dyn Adapter,
    program: &Path,
    model: &str,
) -> Result<ModelCheck> {
    let Some(args) = adapter.models_args() else {
        return Ok(ModelCheck::Unchecked(format!(
            "{} has no model catalog",
            adapter.display_name()
        )));
    };
    if ws
        .config
        .agents
        .get(adapter.name())
        .is_some_and(|settings| {
            adapter
                .configured_models(settings)
                .iter()
                .any(|m| m == model)
        })
    {
        return Ok(ModelCheck::Available);
    }
    let cache_file = ws.state.cache_dir().join(cache_key(ws, adapter, program));
    let ttl = ws.config.defaults.models_cache.0;
    let cached: Option<CachedList> = std::fs::read(&cache_file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .filter(|list: &CachedList| {
            ganger_store::now_ms().saturating_sub(list.created_ms) < ttl.as_millis() as i64
        });
    if let Some(list) = &cached
        && list.models.iter().any(|m| m == model)
    {
        return Ok(ModelCheck::Available);
    }
    let models = match list_models(ws, adapter, program, args) {
        Ok(models) => models,
        Err(e) => {
            return Ok(ModelCheck::Unchecked(format!(
                "could not list the models: {e}"
            )));
        }
    };
    if let Some(dir) = cache_file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let list = CachedList {
        created_ms: ganger_store::now_ms(),
        models,
    };
    if let Ok(bytes) = serde_json::to_vec(&list) {
        let temp = cache_file.with_extension("tmp");
        if std::fs::write(&temp, bytes).is_ok() {
            let _ = std::fs::rename(&temp, &cache_file);
        }
    }
    if list.models.iter().any(|m| m == model) {
        return Ok(ModelCheck::Available);
    }
    Ok(ModelCheck::Missing {
        closest: closest(model, &list.models),
    })
}

/// The available model most like `model`.
pub fn closest(model: &str, available: &[String]) -> Option<String> {
    available
        .iter()
        .map(|candidate| {
            let whole = strsim::jaro_winkler(model, candidate);
            // A model name matters more than its provider: compare the parts after '/' too.
            let tail = |m: &str| m.rsplit('/').next().unwrap_or(m).to_owned();
            let name = strsim::jaro_winkler(&tail(model), &tail(candidate));
            (whole.max(name), candidate)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closest_model_is_found_by_name() {
        let available: Vec<String> = [
            "zen/big-pickle",
            "mock/scripted",
            "openrouter/deepseek/deepseek-v4.1-flash",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            closest("mock/scripte", &available).as_deref(),
            Some("mock/scripted")
        );
        assert_eq!(
            closest("zen/deepseek-v4.1-flash", &available).as_deref(),
            Some("openrouter/deepseek/deepseek-v4.1-flash")
        );
        assert_eq!(closest("x/y", &[]), None);
    }
}
