//! The worker agents: `agents` (what ganger knows and what is installed), `models`.

use super::answered;
use crate::GangerMcp;
use crate::output::{Answer, answer};
use ganger_engine::Engine;
use ganger_engine::documents::AgentList;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// `agents`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agents {}

/// `models`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Models {
    /// The agent.
    pub agent: String,
}

#[tool_router(router = agent_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "The worker agents ganger knows, the tested version of each and what is installed.",
        annotations(read_only_hint = true)
    )]
    async fn agents(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(_): Parameters<Agents>,
    ) -> CallToolResult {
        answered(engine, agents).await
    }

    #[tool(
        description = "The models an agent lists (OpenCode has a catalog; the others take any name).",
        annotations(read_only_hint = true)
    )]
    async fn models(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Models>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.agent_models(&a.agent), |m| {
                let line = if m.catalog {
                    format!("{} models: {}\n", m.agent, m.models.join(", "))
                } else {
                    format!(
                        "{} has no model catalog: it takes any model name\n",
                        m.agent
                    )
                };
                Answer::of(&m, line)
            })
        })
        .await
    }
}

fn agents(engine: &Engine) -> Answer {
    let list = AgentList::new(ganger_engine::agents::find_all(&engine.workspace().config));
    let text = list
        .agents
        .iter()
        .map(|a| {
            format!(
                "{}: {} (tested {})\n",
                a.name,
                a.version
                    .as_deref()
                    .map_or("not installed".to_owned(), |v| format!("{v} installed")),
                a.tested_version
            )
        })
        .collect();
    Answer::of(&list, text)
}
