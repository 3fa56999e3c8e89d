//! The race's tools: `race` (run one brief as several attempts and pick the winner on
//! evidence) and `race_status` (its report).

use super::{TaskArgs, answered, json_of, quiet};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::race::{Driving, RaceOptions, RaceReport};
use ganger_engine::{Brief, EngineError, StartOptions};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

/// `race`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Race {
    /// The race's name; its attempts are the tasks SLUG.1..SLUG.N.
    pub slug: String,
    /// The brief every attempt gets.
    pub brief: String,
    /// The attempts: AGENT[:MODEL][*COUNT], comma separated (`opencode:provider/model*2,claude`).
    pub attempts: String,
    /// The first attempt whose checks pass wins at once; the others are cancelled.
    #[serde(default)]
    pub first_green: bool,
    /// One-off checks (shell commands) run after every round, besides `[[checks]]`.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Fix rounds each attempt gets while its checks fail.
    pub until_green: Option<u32>,
    /// At most this many attempts working at once (default: all).
    pub max: Option<u32>,
    /// The whole race's budget in US dollars (attempts and judges).
    pub budget_usd: Option<f64>,
    /// The whole race's budget in tokens.
    pub budget_tokens: Option<u64>,
    /// Queue the attempts and the judges' rounds for the scheduler (`ganger serve`, `fleet
    /// run`) to start under its limits, instead of starting them here; takes no `max` or
    /// `until_green`.
    #[serde(default)]
    pub queue: bool,
}

#[tool_router(router = race_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Race one brief: several attempts (agents and models) at once, each a task SLUG.N. \
             Only attempts whose checks pass stay; they are judged pairwise (twice, sides swapped); \
             ties go to the smaller diff. Runs until the race ends and answers its report; the \
             same call again resumes a race that was interrupted. With `queue` the attempts and \
             the judges' rounds wait in the queue for `ganger serve` to start them. `merge` with the race's slug merges \
             the winner.",
        annotations(read_only_hint = false)
    )]
    async fn race(
        &self,
        Extension(engine): Extension<Arc<ganger_engine::Engine>>,
        Parameters(a): Parameters<Race>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            let options = RaceOptions {
                slug: a.slug.clone(),
                brief: Some(Brief::Message(a.brief)),
                attempts: a.attempts,
                first_green: a.first_green,
                max: a.max,
                start: StartOptions {
                    slug: a.slug,
                    checks: a.checks,
                    until_green: a.until_green,
                    budget: ganger_engine::Budget {
                        usd: a.budget_usd,
                        tokens: a.budget_tokens,
                    },
                    ..StartOptions::default()
                },
            };
            let driving = Driving {
                detach: false,
                queue: a.queue,
            };
            answer(e.race_driven(options, driving, &mut quiet()), report)
        })
        .await
    }

    #[tool(
        description = "A race's report: each attempt's status, checks, pairwise wins and losses, diff \
             size, cost and time, the reviewers' reasons, the winner and the rule that decided.",
        annotations(read_only_hint = true)
    )]
    async fn race_status(
        &self,
        Extension(engine): Extension<Arc<ganger_engine::Engine>>,
        Parameters(a): Parameters<TaskArgs>,
    ) -> CallToolResult {
        answered(engine, move |e| match e.race_report(&a.slug) {
            Ok(Some(found)) => report(found),
            Ok(None) => Answer::failure(&EngineError::not_found(format!("no race {}", a.slug))),
            Err(error) => Answer::failure(&error),
        })
        .await
    }
}

/// `ganger.race/1`, and its text key by key.
fn report(report: RaceReport) -> Answer {
    Answer::of(&report, text::compact(&json_of(&report)))
}
