//! How an agent is run for this repository: which program (the one its settings name, else
//! the `command` of `ganger.toml`, else ganger's cached install of the tested version, else the
//! one on `PATH`) and with which environment. With the local sandbox the agent runs as if the
//! user ran it by hand: the user's environment (without ganger's own variables) and home, plus
//! the adapter's settings, `ganger.toml`'s `env`, and the keys of this run.

use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use crate::base::install;
use crate::env::keys::LoadedKey;
use ganger_agents::{Adapter, CommandPlan};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The prefix of ganger's own variables (its store, its commander, a host's claim, a round's
/// marker): none is passed to an agent or a check. With the store's URL an agent could write
/// any record of every host; as a commander it could queue rounds in the user's name.
const OWN_PREFIX: &str = "GANGER_";

/// The user's environment without ganger's own variables: what an agent or a check run as
/// the user would see.
pub(crate) fn user_environment() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(key, _)| {
            !key.as_encoded_bytes().starts_with(OWN_PREFIX.as_bytes()) && key != "PGPASSWORD"
        })
        .collect()
}

/// The adapter of the agent `name`, reading the stream format its settings name.
pub fn adapter_for(name: &str, config: &Config) -> Option<&'static dyn Adapter> {
    ganger_agents::configured(name, &config.agent(name)).ok()
}

/// Finds the agent's program: the one its settings name (a `command` agent's template),
/// else `ganger.toml`'s `command`, else the tested version in ganger's cache (`ganger agents
/// install` put it there to be used), else the one on `PATH`.
pub fn resolve_program(adapter: &dyn Adapter, config: &Config) -> Result<PathBuf> {
    let agent_config = config.agent(adapter.name());
    if let Some(named) = adapter.named_program(&agent_config)? {
        return find_named(&named);
    }
    if let Some(command) = agent_config.command {
        return find_executable(&command).ok_or_else(|| {
            EngineError::invalid(format!(
                "agents.{}.command in ganger.toml names {}, which is not an executable",
                adapter.name(),
                command.display()
            ))
        });
    }
    if let Some(cached) = install::cached_program(adapter) {
        return Ok(cached);
    }
    find_executable(Path::new(adapter.program())).ok_or_else(|| {
        EngineError::invalid(format!(
            "{} ({}) is not on PATH",
            adapter.display_name(),
            adapter.program()
        ))
        .hint(format!(
            "`ganger agents install {}` installs the tested version, or set agents.{}.command in ganger.toml",
            adapter.name(),
            adapter.name()
        ))
    })
}

/// A program named in an agent's settings, found, or an error saying where it is named.
pub(crate) fn find_named(named: &ganger_agents::NamedProgram) -> Result<PathBuf> {
    find_executable(Path::new(&named.program)).ok_or_else(|| {
        EngineError::invalid(format!(
            "{} starts with {}, which is not an executable",
            named.named_in, named.program
        ))
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A program path as given, or looked up on `PATH` when it is a bare name.
pub(crate) fn find_executable(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return is_executable(program).then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

/// The agent's environment: the user's (without ganger's own), then `ganger.toml`'s `env`, the adapter's plan (which
/// has already merged any configuration variable from those two) and the keys, later ones
/// winning.
pub fn agent_environment(
    adapter: &dyn Adapter,
    config: &Config,
    plan: &CommandPlan,
    keys: &[LoadedKey],
) -> Vec<(OsString, OsString)> {
    let mut env = user_environment();
    add_settings(&mut env, adapter, config, plan, keys);
    env
}

/// Adds to `env` what ganger sets for the agent, later ones winning: `ganger.toml`'s `env`,
/// the adapter's plan, the keys of the run.
pub(crate) fn add_settings(
    env: &mut Vec<(OsString, OsString)>,
    adapter: &dyn Adapter,
    config: &Config,
    plan: &CommandPlan,
    keys: &[LoadedKey],
) {
    let mut set = |key: &str, value: &str| {
        env.retain(|(k, _)| k != key);
        env.push((key.into(), value.into()));
    };
    for (key, value) in &config.agent(adapter.name()).env {
        set(key, value);
    }
    for (key, value) in &plan.env {
        set(key, value);
    }
    for key in keys {
        set(&key.env, &key.value);
    }
}

/// The inherited agent configuration the adapter merges over (the variable its facts name),
/// as the agent would see it.
pub fn inherited_config(adapter: &dyn Adapter, config: &Config) -> Option<String> {
    let name = adapter.inherited_config_env()?;
    config
        .agent(adapter.name())
        .env
        .get(name)
        .cloned()
        .or_else(|| std::env::var(name).ok())
}

/// `ganger.toml`'s agent configuration as JSON for the adapter: what of its table it plans
/// with.
pub fn config_overlay(adapter: &dyn Adapter, config: &Config) -> Option<serde_json::Value> {
    adapter.configuration(&config.agent(adapter.name()))
}

/// The environment an adapter sees when it plans a round: what the agent would start with
/// before the plan's own variables.
pub fn request_env(
    adapter: &dyn Adapter,
    config: &Config,
    keys: &[LoadedKey],
) -> std::collections::BTreeMap<String, String> {
    let plan = CommandPlan::new(Vec::new(), Vec::new(), None);
    agent_environment(adapter, config, &plan, keys)
        .into_iter()
        .filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// The environment an unsandboxed round of `adapter` in `worktree` runs with on this host,
/// the plan's own variables included (a home of its own some adapters give the agent under
/// its directory `agent_dir`): where the agent keeps its sessions.
pub(crate) fn round_env(
    adapter: &dyn Adapter,
    config: &Config,
    agent_dir: &Path,
    worktree: &Path,
) -> std::collections::BTreeMap<String, String> {
    let mut env = request_env(adapter, config, &[]);
    if let Ok(plan) = plan_unrun(adapter, config, "", None, worktree, agent_dir) {
        env.extend(plan.env);
    }
    env
}

/// The plan of a round of `prompt` (in `session`) for `adapter` that is not run: with the
/// configuration and environment a round gets, a write permission, no model.
fn plan_unrun(
    adapter: &dyn Adapter,
    config: &Config,
    prompt: &str,
    session: Option<&str>,
    worktree: &Path,
    agent_dir: &Path,
) -> std::result::Result<CommandPlan, ganger_agents::PlanError> {
    let overlay = config_overlay(adapter, config);
    let inherited = inherited_config(adapter, config);
    let env = request_env(adapter, config, &[]);
    adapter.plan(&ganger_agents::RoundRequest {
        resume_at: None,
        prompt,
        session,
        new_session_id: "00000000-0000-4000-8000-000000000000",
        title: "check",
        model: None,
        worktree,
        config: overlay.as_ref(),
        inherited_config: inherited.as_deref(),
        permission: ganger_agents::Permission::Write,
        sandboxed: false,
        env: &env,
        agent_dir,
    })
}

/// Plans a round of `prompt` for `adapter` without running it, so that what the plan would
/// refuse (`ganger.toml`'s agent settings, a prompt the command line cannot carry) is refused
/// before anything is made, not when the round starts.
pub(crate) fn check_plan(
    adapter: &dyn Adapter,
    config: &Config,
    prompt: &str,
    session: Option<&str>,
    worktree: &Path,
    agent_dir: &Path,
) -> Result<()> {
    let plan = plan_unrun(adapter, config, prompt, session, worktree, agent_dir)?;
    if plan.args.iter().any(|arg| arg.contains('\0')) {
        return Err(crate::base::error::EngineError::invalid(format!(
            "the task text holds a NUL byte, which {} cannot take in its command line",
            adapter.display_name()
        )));
    }
    Ok(())
}
