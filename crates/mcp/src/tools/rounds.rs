//! The tools that read a task's rounds: `wait`, `status`, `report`, `diff`, `log`.

use super::{answered, json_of, quiet};
use crate::GangerMcp;
use crate::output::{Answer, answer};
use crate::text;
use ganger_engine::documents::{DiffPageDocument, StillRunning, TailLine};
use ganger_engine::{Engine, EngineError, StatusRequest, StatusView, WaitOutcome};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// The longest `wait` or `watch` a call may ask for.
pub const MAX_WAIT: u64 = 3600;
/// A `wait` or `watch` that names no timeout.
pub const DEFAULT_WAIT: u64 = 120;
/// A diff page that names no size, and the largest one.
const DEFAULT_PAGE: usize = 20_000;
const MAX_PAGE: usize = 100_000;

/// `wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// The task whose running round to wait for.
    pub slug: String,
    /// The longest wait in seconds (default 120, at most 3600); if the round still runs then,
    /// the answer says so: call again.
    pub timeout_seconds: Option<u64>,
}

/// `status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// One task: its last round's report (or its pipeline). Leave out for the task table.
    pub slug: Option<String>,
    /// Only the tasks with this label, as KEY=VALUE.
    pub label: Option<String>,
    /// Only the tasks this commander owns.
    pub owner: Option<String>,
}

/// `report`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// The task.
    pub slug: String,
    /// The round (default: the last).
    pub round: Option<u32>,
}

/// `diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Diff {
    /// The task.
    pub slug: String,
    /// Only what this round changed (default: the whole task against its base).
    pub round: Option<u32>,
    /// A diffstat (files and line counts) instead of the patch.
    #[serde(default)]
    pub stat: bool,
    /// Where this page starts, in bytes of the patch (the last page's `next_offset`).
    #[serde(default)]
    pub offset: usize,
    /// The page's size in bytes (default 20000, at most 100000).
    pub limit: Option<usize>,
}

/// `log`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// The task.
    pub slug: String,
    /// The round (default: the last).
    pub round: Option<u32>,
    /// How many of the last events (default 30, at most 500).
    pub lines: Option<usize>,
}

#[tool_router(router = round_tools, vis = "pub(crate)")]
impl GangerMcp {
    #[tool(
        description = "Wait for a task's running round to end and return its report (status, the worker's \
             answer and DONE: line, changed files, check results, cost). If the round still \
             runs at the timeout the answer says so: call `wait` again. After it: read `diff`, \
             then `fix` or `merge`.",
        annotations(read_only_hint = true)
    )]
    async fn wait(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Wait>,
    ) -> CallToolResult {
        answered(engine, move |e| wait(e, a)).await
    }

    #[tool(
        description = "The task table (each task's rounds, last status, owner, DONE: line), filtered by \
             label or owner; or, with a slug, that task's last round's report.",
        annotations(read_only_hint = true)
    )]
    async fn status(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Status>,
    ) -> CallToolResult {
        answered(engine, move |e| status(e, a)).await
    }

    #[tool(
        description = "The report of one round of a task (default: the last): status, finish reason, the \
             worker's answer, changed files, checks, errors, cost and tokens.",
        annotations(read_only_hint = true)
    )]
    async fn report(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Report>,
    ) -> CallToolResult {
        answered(engine, move |e| {
            answer(e.report_of(&a.slug, a.round), |r| {
                Answer::of(&r, text::report(&r))
            })
        })
        .await
    }

    #[tool(
        description = "What a task changed against its base (or what one round changed), as a patch or a \
             diffstat, a page at a time: when `next_offset` is set, call again with it as \
             `offset`. Read it before deciding to fix or merge: the diff is the evidence, the \
             worker's claim is not.",
        annotations(read_only_hint = true)
    )]
    async fn diff(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Diff>,
    ) -> CallToolResult {
        answered(engine, move |e| diff(e, a)).await
    }

    #[tool(
        description = "The last events of a round (tool calls, text, errors), for seeing what the worker \
             did or why it failed.",
        annotations(read_only_hint = true)
    )]
    async fn log(
        &self,
        Extension(engine): Extension<Arc<Engine>>,
        Parameters(a): Parameters<Log>,
    ) -> CallToolResult {
        answered(engine, move |e| log(e, a)).await
    }
}

fn wait(engine: &Engine, a: Wait) -> Answer {
    let timeout = Duration::from_secs(a.timeout_seconds.unwrap_or(DEFAULT_WAIT).min(MAX_WAIT));
    answer(
        engine.wait(&a.slug, Some(timeout), &mut quiet()),
        |outcome| match outcome {
            WaitOutcome::Ended(report) => Answer::of(&report, text::report(&report)),
            WaitOutcome::StillRunning {
                number,
                host_pid,
                started_at,
            } => {
                let still = StillRunning::new(&a.slug, number, host_pid, &started_at);
                let line = format!(
                    "round {number} of {} is still running (started {started_at}); call wait again\n",
                    a.slug
                );
                Answer::of(&still, line)
            }
        },
    )
}

fn status(engine: &Engine, a: Status) -> Answer {
    let label = match a.label.as_deref().map(|l| l.split_once('=')) {
        None => None,
        Some(Some((key, value))) => match engine.tasks_labelled(key, value) {
            Ok(slugs) => Some(slugs),
            Err(error) => return Answer::failure(&error),
        },
        Some(None) => {
            return Answer::failure(&EngineError::invalid(format!(
                "label {:?}: expected KEY=VALUE",
                a.label.unwrap_or_default()
            )));
        }
    };
    let request = StatusRequest {
        slug: a.slug,
        tree: false,
    };
    answer(engine.status(&request, &mut quiet()), |view| match view {
        StatusView::List(mut list) => {
            list.tasks.retain(|t| {
                a.owner.as_deref().is_none_or(|o| t.owner == o)
                    && label.as_ref().is_none_or(|slugs| slugs.contains(&t.slug))
            });
            Answer::of(&list, text::task_table(&list))
        }
        StatusView::Round(report) => Answer::of(&report, text::report(&report)),
        StatusView::Pipeline(report) => Answer::of(&report, text::compact(&json_of(&report))),
    })
}

fn diff(engine: &Engine, a: Diff) -> Answer {
    let limit = a.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let page = engine.diff_page(&a.slug, a.round, a.stat, a.offset as u64, limit);
    answer(page, |page| {
        let page = DiffPageDocument::new(&a.slug, a.round, a.stat, page);
        let what = a
            .round
            .map_or_else(|| "the task".to_owned(), |n| format!("round {n}"));
        let mut line = if page.total_bytes == 0 {
            format!("{}: no changes in {what}\n", a.slug)
        } else {
            format!(
                "{} ({what}): bytes {}..{} of {}\n{}",
                a.slug,
                page.offset,
                page.next_offset.unwrap_or(page.total_bytes),
                page.total_bytes,
                page.text
            )
        };
        if let Some(next) = page.next_offset {
            line.push_str(&format!("\n(more: call diff again with offset {next})\n"));
        }
        Answer::of(&page, line)
    })
}

fn log(engine: &Engine, a: Log) -> Answer {
    let keep = a.lines.unwrap_or(30).clamp(1, 500);
    answer(engine.log_tail(&a.slug, a.round, keep), |tail| {
        let text: String = tail
            .lines
            .iter()
            .map(|line| match line {
                // The events as their JSON value writes them (keys in order).
                TailLine::Parsed { line, events, .. } => format!("{line} {}\n", json_of(events)),
                TailLine::TooLong { line, .. } => format!("{line} null\n"),
            })
            .collect();
        Answer::of(&tail, text)
    })
}
