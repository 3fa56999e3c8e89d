//! The commander's journal: `watch` for what is new, `ack` for what was handled.

use super::answered;
use super::rounds::{DEFAULT_WAIT, MAX_WAIT};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::Engine;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// `watch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// The longest wait in seconds for something new (default 120, at most 3600; 0 looks
    /// once).
    pub timeout_seconds: Option<u64>,
    /// Entries after this number (default: after the cursor `ack` moved).
    pub after: Option<i64>,
}

/// `ack`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ack {
    /// The last entry read: the cursor moves past it.
    pub upto: i64,
}

#[tool_router(router = journal_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Block until your journal has something new (a round ended, a check failed, a task \
             was transferred, a budget was reached), or the timeout passes. Use it instead of \
             polling when several tasks run: then `ack` the entries you handled.",
        annotations(read_only_hint = true)
    )]
    async fn watch(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Watch>,
    ) -> CallToolResult {
        let timeout = Duration::from_secs(a.timeout_seconds.unwrap_or(DEFAULT_WAIT).min(MAX_WAIT));
        answered(engine, move |e| {
            answer(e.wait_journal(a.after, timeout), |page| {
                Answer::of(&page, text::journal(&page))
            })
        })
        .await
    }

    #[tool(
        description = "Move your journal's cursor past entry `upto`: `watch` then shows only newer ones.",
        annotations(read_only_hint = false)
    )]
    async fn ack(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Ack>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.ack(None, a.upto), |r| {
                let line = format!(
                    "{}: journal acknowledged up to entry {}\n",
                    r.commander, r.cursor
                );
                Answer::of(&r, line)
            })
        })
        .await
    }
}
