//! A role's reasoning effort, passed to its agent the way that agent takes it: Codex as
//! `model_reasoning_effort` (a `-c` option), OpenCode as its build agent's `reasoningEffort`
//! (a model option its provider sends, `reasoning_effort` for OpenAI-compatible ones). Other
//! agents take none ganger knows how to set, and a role that names one for them is refused
//! rather than silently ignored. A pipeline's rounds run in the foreground, so the setting
//! reaches the round through the configuration this process hands its round host.

use super::roles::Role;
use crate::error::{EngineError, Result};
use crate::workspace::Workspace;

/// The agent configuration that carries `effort`, for the agents that take one.
fn overlay(agent: &str, effort: &str) -> Option<toml::Table> {
    let value = toml::Value::String(effort.to_owned());
    let mut table = toml::Table::new();
    match agent {
        "codex" => {
            table.insert("model_reasoning_effort".into(), value);
        }
        "opencode" => {
            let mut build = toml::Table::new();
            build.insert("reasoningEffort".into(), value);
            let mut agents = toml::Table::new();
            agents.insert("build".into(), toml::Value::Table(build));
            table.insert("agent".into(), toml::Value::Table(agents));
        }
        _ => return None,
    }
    Some(table)
}

/// Refuses an effort for an agent that takes none.
pub fn check(role: &Role) -> Result<()> {
    match &role.effort {
        Some(effort) if overlay(&role.agent, effort).is_none() => {
            Err(EngineError::invalid(format!(
                "roles.{}.effort: ganger passes a reasoning effort to codex and opencode, not to {}",
                role.name, role.agent
            )))
        }
        _ => Ok(()),
    }
}

/// The workspace a round of `role` runs with: `ws` itself, or a copy whose agent
/// configuration carries the role's effort.
pub fn workspace_for(ws: &Workspace, role: &Role) -> Result<Option<Workspace>> {
    check(role)?;
    let Some(table) = role
        .effort
        .as_deref()
        .and_then(|effort| overlay(&role.agent, effort))
    else {
        return Ok(None);
    };
    let mut config = ws.config.clone();
    let agent = config.agents.entry(role.agent.clone()).or_default();
    let mut merged = agent.config.take().unwrap_or_default();
    crate::config::merge(&mut merged, table);
    agent.config = Some(merged);
    Ok(Some(Workspace {
        repo: ws.repo.clone(),
        state: ws.state.clone(),
        config,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_and_opencode_take_an_effort_and_others_are_refused() {
        let codex = overlay("codex", "high").unwrap_or_default();
        assert_eq!(codex["model_reasoning_effort"].as_str(), Some("high"));
        let opencode = overlay("opencode", "low").unwrap_or_default();
        assert_eq!(
            opencode["agent"]["build"]["reasoningEffort"].as_str(),
            Some("low")
        );
        assert!(overlay("claude", "high").is_none());
    }
}
