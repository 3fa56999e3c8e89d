//! A role's reasoning effort, passed to its agent the way that agent takes it: the adapter
//! says which entries of the agent's configuration carry it ([`ganger_agents::Adapter::effort`]).
//! Agents that take none ganger knows how to set are refused rather than silently ignored. A
//! pipeline's rounds run in the foreground, so the setting reaches the round through the
//! configuration this process hands its round host.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;

/// The agent configuration that carries `effort`, for the agents that take one.
fn overlay(agent: &str, effort: &str) -> Option<toml::Table> {
    ganger_agents::named(agent).ok()?.effort(effort)
}

/// The agents that take an effort, by name in alphabetical order, as a sentence lists them.
fn taking_an_effort() -> String {
    let mut names: Vec<&str> = ganger_agents::names()
        .into_iter()
        .filter(|name| overlay(name, "high").is_some())
        .collect();
    names.sort_unstable();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((only, _)) => (*only).to_owned(),
        None => "no agent".to_owned(),
    }
}

/// A role's effort as this file reads it: which role, its agent, the effort it asks for.
#[derive(Debug, Clone, Copy)]
pub struct RoleEffort<'a> {
    pub role: &'a str,
    pub agent: &'a str,
    pub effort: Option<&'a str>,
}

/// Refuses an effort for an agent that takes none.
pub fn check(asked: RoleEffort<'_>) -> Result<()> {
    match asked.effort {
        Some(effort) if overlay(asked.agent, effort).is_none() => {
            Err(EngineError::invalid(format!(
                "roles.{}.effort: ganger passes a reasoning effort to {}, not to {}",
                asked.role,
                taking_an_effort(),
                asked.agent
            )))
        }
        _ => Ok(()),
    }
}

/// The workspace a round of `role` runs with: `ws` itself, or a copy whose agent
/// configuration carries the role's effort.
pub fn workspace_for(ws: &Workspace, asked: RoleEffort<'_>) -> Result<Option<Workspace>> {
    check(asked)?;
    let Some(table) = asked.effort.and_then(|effort| overlay(asked.agent, effort)) else {
        return Ok(None);
    };
    let mut config = ws.config.clone();
    let agent = config.agents.entry(asked.agent.to_owned()).or_default();
    let mut merged = agent.config.take().unwrap_or_default();
    crate::base::config::merge(&mut merged, table);
    agent.config = Some(merged);
    Ok(Some(ws.with_config(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role<'a>(agent: &'a str, effort: &'a str) -> RoleEffort<'a> {
        RoleEffort {
            role: "executor",
            agent,
            effort: Some(effort),
        }
    }

    #[test]
    fn an_effort_is_taken_where_the_adapter_says_how_and_refused_elsewhere() {
        let mut taking = Vec::new();
        for name in ganger_agents::names() {
            let role = role(name, "low");
            let adapter = ganger_agents::named(name).unwrap();
            match adapter.effort("low") {
                Some(table) => {
                    assert!(check(role).is_ok(), "{name}");
                    assert_eq!(overlay(name, "low"), Some(table));
                    taking.push(name);
                }
                None => {
                    let refused = check(role).map_err(|e| e.to_string());
                    let expected = format!(
                        "roles.executor.effort: ganger passes a reasoning effort to {}, not to {name}",
                        taking_an_effort(),
                    );
                    assert_eq!(refused, Err(expected));
                }
            }
        }
        // Some agents take one, and some (the command agent at least) do not.
        assert!(!taking.is_empty() && taking.len() < ganger_agents::names().len());
        taking.sort_unstable();
        assert_eq!(taking_an_effort(), taking.join(" and "));
    }
}
