//! The tools, a file per group, each declared with rmcp's own macros: a `#[tool]` method per
//! tool (its name, a description that teaches where it fits in the supervise loop, whether it
//! only reads), its arguments a plain serde type read through `Parameters` (its JSON Schema,
//! field docs included, is the tool's `inputSchema`, so what a client sees and what the server
//! accepts cannot drift apart; unknown fields are refused, as the command line refuses unknown
//! options). Each call is one engine call as the commander, run on tokio's blocking pool (a
//! `wait` blocks for minutes), answered as text and the command line's JSON document.
//! Rounds always run detached, as `--detach` does: a call returns once the round is recorded
//! as running, and `wait` or `watch` follows it.

mod agents;
mod fleets;
mod journal;
mod land;
mod ownership;
mod pipelines;
mod races;
mod rounds;
mod tasks;

use crate::GangerMcp;
use crate::output::Answer;
use ganger_engine::{Engine, EngineError, Notice};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// The tools in the supervise loop's order, as a client lists them: start, wait, read, fix
/// or merge, then the rest.
const LOOP_ORDER: [&str; 31] = [
    "start",
    "wait",
    "status",
    "report",
    "diff",
    "log",
    "fix",
    "merge",
    "cancel",
    "rewind",
    "plan",
    "approve",
    "reject",
    "race",
    "race_status",
    "land",
    "land_status",
    "assign",
    "transfer",
    "release",
    "policy",
    "allow",
    "broadcast",
    "fleet_run",
    "fleet_submit",
    "fleet_status",
    "groups",
    "watch",
    "ack",
    "agents",
    "models",
];

/// A task named alone: `cancel`, `release`, `approve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    /// The task.
    pub slug: String,
}

impl GangerMcp {
    /// Every tool's route.
    pub(crate) fn tool_router() -> ToolRouter<GangerMcp> {
        GangerMcp::task_tools()
            + GangerMcp::round_tools()
            + GangerMcp::pipeline_tools()
            + GangerMcp::race_tools()
            + GangerMcp::land_tools()
            + GangerMcp::ownership_tools()
            + GangerMcp::fleet_tools()
            + GangerMcp::journal_tools()
            + GangerMcp::agent_tools()
    }
}

/// The tools as a client lists them, in the loop's order.
pub fn tools(router: &ToolRouter<GangerMcp>) -> Vec<Tool> {
    let mut tools = router.list_all();
    tools.sort_by_key(|tool| {
        LOOP_ORDER
            .iter()
            .position(|name| *name == tool.name)
            .unwrap_or(LOOP_ORDER.len())
    });
    tools
}

/// The tools' names, in the loop's order.
pub fn tool_names() -> Vec<String> {
    tools(&GangerMcp::tool_router())
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect()
}

/// Runs a tool's engine call on the blocking pool; its answer is the tool's result.
async fn answered(
    engine: Arc<Engine>,
    call: impl FnOnce(&Engine) -> Answer + Send + 'static,
) -> CallToolResult {
    tokio::task::spawn_blocking(move || call(&engine))
        .await
        .unwrap_or_else(|e| {
            Answer::failure(&EngineError::invalid(format!("the tool call failed: {e}")))
        })
        .into_result()
}

/// Notices are progress for a person; a tool answers with its result alone.
fn quiet() -> impl FnMut(Notice) {
    |_| {}
}

/// A document as JSON, for the text made of it key by key.
fn json_of<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// The text of a value, parsed (`local`, `read-only`, ...), or the engine's refusal.
fn parsed<T: std::str::FromStr<Err = String>>(
    text: Option<String>,
) -> Result<Option<T>, EngineError> {
    text.map(|t| t.parse().map_err(EngineError::invalid))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tools as a client lists them, in the loop's order: names, descriptions, schemas and
    /// hints, pinned.
    #[test]
    fn the_tools_are_listed_as_they_were() {
        insta::assert_json_snapshot!("tools", tools(&GangerMcp::tool_router()));
    }

    #[test]
    fn the_loop_orders_every_tool_once() {
        let mut names = tool_names();
        assert_eq!(names.len(), LOOP_ORDER.len());
        names.sort();
        let mut order = LOOP_ORDER.to_vec();
        order.sort_unstable();
        assert_eq!(names, order);
    }
}
