//! The models an agent offers, for front ends that let a commander choose one (the MCP
//! server's `agents` tool): the agent's own list where it has a catalog, asked with
//! the environment and configuration its rounds get; the other agents take any name.

use crate::api::Engine;
use crate::base::error::{EngineError, Result};
use std::time::Duration;

/// How long listing the models may take.
const LIST_LIMIT: Duration = Duration::from_secs(120);

/// An agent's models.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct AgentModels {
    pub schema: &'static str,
    pub agent: String,
    /// Whether the agent has a list; without one it accepts any model name.
    pub catalog: bool,
    pub models: Vec<String>,
}

impl AgentModels {
    fn new(agent: &str, catalog: bool, models: Vec<String>) -> AgentModels {
        AgentModels {
            schema: "ganger.agent-models/1",
            agent: agent.to_owned(),
            catalog,
            models,
        }
    }
}

impl Engine {
    /// The models `agent` lists (none for an agent without a catalog).
    pub fn agent_models(&self, agent: &str) -> Result<AgentModels> {
        let ws = self.workspace();
        let adapter = ganger_agents::configured(agent, &ws.config.agent(agent))
            .map_err(|unknown| EngineError::invalid(unknown.to_string()))?;
        let Some(args) = adapter.models_args() else {
            return Ok(AgentModels::new(adapter.name(), false, Vec::new()));
        };
        let (program, _) = crate::env::agents::locate(adapter, &ws.config).ok_or_else(|| {
            EngineError::invalid(format!("{} is not installed", adapter.display_name()))
                .hint(format!("`ganger agents install {}`", adapter.name()))
        })?;
        let stdout =
            crate::env::agent_query::ask(ws, adapter, &program, args, &ws.repo.main, LIST_LIMIT)?;
        Ok(AgentModels::new(
            adapter.name(),
            true,
            adapter.parse_models(&stdout),
        ))
    }
}
