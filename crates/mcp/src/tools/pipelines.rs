//! The role pipeline's tools: `plan`, `approve`, `reject`.

use super::{TaskArgs, answered, json_of, parsed, quiet};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::{Brief, Engine, PipelineReport};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// `plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The task.
    pub slug: String,
    /// What the plan is for.
    pub brief: String,
    /// The planner's agent.
    pub agent: Option<String>,
    /// The planner's model.
    pub model: Option<String>,
    /// The revision to start from.
    pub base: Option<String>,
    /// Where rounds run: local, bwrap or docker.
    pub sandbox: Option<String>,
}

/// `reject`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reject {
    /// The task.
    pub slug: String,
    /// What the planner must change.
    pub notes: String,
}

#[tool_router(router = pipeline_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "The role pipeline: a planner writes numbered steps and a critic attacks them; then \
             `approve` (execution and reviews) or `reject` with notes. Runs until the plan waits \
             for a decision.",
        annotations(read_only_hint = false)
    )]
    async fn plan(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Plan>,
    ) -> CallToolResult {
        answered(engine, move |e| plan(e, a)).await
    }

    #[tool(
        description = "Approve a pipeline's plan: the executor does each step, the reviewers check the \
             work, their findings go back as fix rounds. Runs until the pipeline ends.",
        annotations(read_only_hint = false)
    )]
    async fn approve(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<TaskArgs>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.approve(&a.slug, None, &mut quiet()), pipeline)
        })
        .await
    }

    #[tool(
        description = "Send a pipeline's plan back to the planner with notes; the critic reviews the new \
             version.",
        annotations(read_only_hint = false)
    )]
    async fn reject(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Reject>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            let notes = Brief::Message(a.notes);
            answer(e.reject(&a.slug, &notes, None, &mut quiet()), pipeline)
        })
        .await
    }
}

/// `ganger.pipeline/1`, and its text key by key.
fn pipeline(report: PipelineReport) -> Answer {
    Answer::of(&report, text::compact(&json_of(&report)))
}

fn plan(engine: &Engine, a: Plan) -> Answer {
    let sandbox = match parsed(a.sandbox) {
        Ok(sandbox) => sandbox,
        Err(error) => return Answer::failure(&error),
    };
    let options = ganger_engine::PlanOptions {
        slug: a.slug,
        brief: Some(Brief::Message(a.brief)),
        agent: a.agent,
        model: a.model,
        base: a.base,
        sandbox,
        network: None,
        commander: None,
    };
    answer(engine.plan(options, &mut quiet()), pipeline)
}
