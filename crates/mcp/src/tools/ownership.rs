//! Who owns a task and what it lets in: `assign`, `transfer`, `release`, `policy`, `allow`.

use super::{TaskArgs, answered, quiet};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use ganger_engine::{Engine, EngineError, OwnershipAction};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// `assign`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assign {
    /// The task.
    pub slug: String,
    /// Who gets it (default: this commander).
    pub to: Option<String>,
}

/// `transfer`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// The task.
    pub slug: String,
    /// The commander who owns it next.
    pub to: String,
}

/// `policy`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The task.
    pub slug: String,
    /// accept (new rounds run), hold (they wait in the queue) or refuse.
    pub policy: String,
}

/// `allow`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    /// The task.
    pub slug: String,
    /// Commanders who may send it rounds besides its owner.
    pub names: Vec<String>,
    /// Stop letting them instead.
    #[serde(default)]
    pub remove: bool,
}

#[tool_router(router = ownership_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Take a task nobody owns (or, as its owner, give it to `to`). Only a task's owner \
             fixes, cancels, merges or hands it on.",
        annotations(read_only_hint = false)
    )]
    async fn assign(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Assign>,
    ) -> CallToolResult {
        let action = OwnershipAction::Assign { to: a.to };
        answered(engine, move |e| ownership(e, &a.slug, action)).await
    }

    #[tool(
        description = "Hand a task you own to another commander. Its generation goes up: rounds sent under \
             the old one are refused, never delivered to the wrong owner.",
        annotations(read_only_hint = false)
    )]
    async fn transfer(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Transfer>,
    ) -> CallToolResult {
        let action = OwnershipAction::Transfer { to: a.to };
        answered(engine, move |e| ownership(e, &a.slug, action)).await
    }

    #[tool(
        description = "Let a task go: nobody owns it until someone assigns it.",
        annotations(read_only_hint = false)
    )]
    async fn release(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<TaskArgs>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            ownership(e, &a.slug, OwnershipAction::Release)
        })
        .await
    }

    #[tool(
        description = "What a task does with new rounds: accept, hold (they wait in the queue) or refuse.",
        annotations(read_only_hint = false)
    )]
    async fn policy(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Policy>,
    ) -> CallToolResult {
        answered(engine, move |e| match a.policy.parse() {
            Ok(policy) => ownership(e, &a.slug, OwnershipAction::Policy(policy)),
            Err(why) => Answer::failure(&EngineError::invalid(why)),
        })
        .await
    }

    #[tool(
        description = "Let other commanders send a task rounds besides its owner (or stop letting them).",
        annotations(read_only_hint = false)
    )]
    async fn allow(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Allow>,
    ) -> CallToolResult {
        let action = OwnershipAction::Allow {
            names: a.names,
            remove: a.remove,
        };
        answered(engine, move |e| ownership(e, &a.slug, action)).await
    }
}

fn ownership(engine: &Engine, slug: &str, action: OwnershipAction) -> Answer {
    answer(engine.ownership(slug, &action, None, &mut quiet()), |r| {
        let owner = if r.owner.is_empty() {
            "nobody"
        } else {
            &r.owner
        };
        let mut line = format!(
            "{}: owned by {owner} (generation {}), new rounds: {}",
            r.task, r.generation, r.inbound
        );
        if !r.allowed.is_empty() {
            line.push_str(&format!(", also allowed: {}", r.allowed.join(", ")));
        }
        line.push('\n');
        Answer::of(&r, line)
    })
}
