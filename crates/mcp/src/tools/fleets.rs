//! Many tasks at once: `broadcast`, `fleet_run`, `fleet_submit`, `fleet_status`, `groups`.

use super::{answered, json_of};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::Engine;
use ganger_engine::documents::{FleetSubmitted, Queued};
use ganger_engine::fleet::{Drain, Limits, SchedulerOptions, read_fleet};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// `broadcast`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Broadcast {
    /// The message, sent as one fix round to each task.
    pub brief: String,
    /// Only these tasks (default: every task this commander owns).
    #[serde(default)]
    pub only: Vec<String>,
}

/// `fleet_run`, `fleet_submit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FleetFile {
    /// The fleet file (TOML: tasks with briefs, agents, models, `after` dependencies, limits).
    pub file: String,
    /// At most this many rounds at once (fleet_run).
    pub max: Option<u32>,
}

/// `fleet_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FleetStatus {
    /// The fleet (default: every queued item).
    pub name: Option<String>,
}

/// `groups`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Groups {
    /// The label whose values group the tasks.
    pub key: String,
}

#[tool_router(router = fleet_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Queue one fix round for many tasks at once (every task you own, or `only`); the \
             scheduler (`ganger serve`) runs them under its limits.",
        annotations(read_only_hint = false)
    )]
    async fn broadcast(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Broadcast>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.broadcast(&a.brief, &a.only, None), |items| {
                queued(&Queued::new(items, false))
            })
        })
        .await
    }

    #[tool(
        description = "Run a fleet file's tasks here until they are all done (dependencies, limits); \
             returns the fleet's table.",
        annotations(read_only_hint = false)
    )]
    async fn fleet_run(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<FleetFile>,
    ) -> CallToolResult {
        answered(engine, move |e| fleet_run(e, a)).await
    }

    #[tool(
        description = "Queue a fleet file's tasks for the scheduler (`ganger serve`) and return at once.",
        annotations(read_only_hint = false)
    )]
    async fn fleet_submit(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<FleetFile>,
    ) -> CallToolResult {
        answered(engine, move |e| fleet_submit(e, a)).await
    }

    #[tool(
        description = "A fleet's tasks (queue state, rounds, last status, DONE: line), or every queued item.",
        annotations(read_only_hint = true)
    )]
    async fn fleet_status(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<FleetStatus>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.fleet_status(a.name.as_deref()), |s| {
                Answer::of(&s, text::compact(&json_of(&s)))
            })
        })
        .await
    }

    #[tool(
        description = "Tasks grouped by a label's value: how many in each state and the group's last \
             DONE: line.",
        annotations(read_only_hint = true)
    )]
    async fn groups(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Groups>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.groups(&a.key), |g| {
                Answer::of(&g, text::compact(&json_of(&g)))
            })
        })
        .await
    }
}

/// `ganger.queued/1`, a line per item.
pub(super) fn queued(queued: &Queued) -> Answer {
    let text = queued
        .items
        .iter()
        .map(|item| {
            format!(
                "queued {} {} (item {}); the scheduler (`ganger serve`) starts it\n",
                item.kind.as_str(),
                item.slug,
                item.id
            )
        })
        .collect();
    Answer::of(queued, text)
}

fn fleet_submit(engine: &Engine, a: FleetFile) -> Answer {
    let fleet = match read_fleet(std::path::Path::new(&a.file)) {
        Ok(fleet) => fleet,
        Err(error) => return Answer::failure(&error),
    };
    answer(engine.submit_fleet(&fleet, None), |submitted| {
        let document = FleetSubmitted::new(&fleet.name, submitted);
        let mut line = document.line();
        if engine.scheduler().is_none() {
            line.push_str(
                "no `ganger serve` runs for this repository yet: the tasks wait for one\n",
            );
        }
        Answer::of(&document, line)
    })
}

fn fleet_run(engine: &Engine, a: FleetFile) -> Answer {
    let fleet = match read_fleet(std::path::Path::new(&a.file)) {
        Ok(fleet) => fleet,
        Err(error) => return Answer::failure(&error),
    };
    let options = SchedulerOptions {
        limits: Limits {
            global: a.max,
            ..Limits::default()
        },
        drain: Drain::Fleet(fleet.name.clone()),
        ..SchedulerOptions::default()
    };
    let run = engine.run_fleet(&fleet, options, None, &mut |_, _| {}, &mut |_| {});
    answer(run, |run| {
        Answer::of(&run.status, text::compact(&json_of(&run.status)))
    })
}
