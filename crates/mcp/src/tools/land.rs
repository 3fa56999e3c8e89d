//! The merge queue's tools: `land` (queue tasks to land on their bases, and with `run` land
//! the queue in the call) and `land_status` (the queue, the batches, what was sent back).
//! Only a task's owner, or a commander its owner allows, may queue it: the engine's rule.

use super::{answered, json_of, quiet};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::LandOptions;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// `land`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Land {
    /// The tasks to queue (each one's last round must have passed its checks); none with
    /// `run` lands what is queued.
    #[serde(default)]
    pub slugs: Vec<String>,
    /// A task sent back (a conflict, or a culprit of red checks) goes to its worker as a fix
    /// round, and is queued again once that round passes.
    #[serde(default)]
    pub fix: bool,
    /// Queued ahead of lower priorities (default 0).
    #[serde(default)]
    pub priority: i64,
    /// Land the queue in this call, until it is empty (else `ganger serve`, a worker or
    /// `ganger land --run` lands it).
    #[serde(default)]
    pub run: bool,
    /// With `run`: the most tasks a batch takes (default 8).
    pub batch: Option<u32>,
}

/// `land_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LandStatusArgs {}

#[tool_router(router = land_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Queue tasks whose last round passed its checks to land on their base branches \
             (a merge queue that never breaks the base: batches tested together, conflicts and \
             culprits sent back, the rest landed as one tested commit). With `run`, land the queue \
             in this call. Only a task's owner or a commander it allows may queue it. Answers what \
             was queued and each batch landed.",
        annotations(read_only_hint = false)
    )]
    async fn land(
        &self,
        Extension(engine): Extension<Arc<ganger_engine::Engine>>,
        Parameters(a): Parameters<Land>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            let options = LandOptions {
                slugs: a.slugs,
                run: a.run,
                batch: a.batch,
                priority: a.priority,
                fix: a.fix,
                commander: None,
            };
            answer(e.land(options, &mut quiet()), |report| {
                Answer::of(&report, text::compact(&json_of(&report)))
            })
        })
        .await
    }

    #[tool(
        description = "The merge queue: the tasks queued to land, each batch with its check runs \
             (the bisection so far), the flaky checks, and what was sent back and why.",
        annotations(read_only_hint = true)
    )]
    async fn land_status(
        &self,
        Extension(engine): Extension<Arc<ganger_engine::Engine>>,
        Parameters(_): Parameters<LandStatusArgs>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.land_status(), |status| {
                Answer::of(&status, text::compact(&json_of(&status)))
            })
        })
        .await
    }
}
