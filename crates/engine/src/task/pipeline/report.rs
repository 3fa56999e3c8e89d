//! What `ganger plan`, `approve`, `reject` and `status SLUG` print about a pipeline
//! (`ganger.pipeline/1`, docs/json.md), and the task table as a tree (`status --tree`): each
//! pipeline's role tasks under it.

use super::plan_steps::parse_steps;
use super::state::PlanFiles;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::report::{TaskList, task_list};
use crate::task::lookup::find_task;
use ganger_events::{Permission, RoundStatus};
use ganger_store::{ReviewerVerdict, TaskSummary};
use serde::Serialize;
use std::path::PathBuf;

/// The schema of a pipeline report.
pub const PIPELINE_SCHEMA: &str = "ganger.pipeline/1";

/// A pipeline: its stage, its plan, its reviewers' verdicts and its roles' tasks.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PipelineReport {
    pub schema: &'static str,
    pub task: String,
    /// `planning`, `critiquing`, `awaiting-approval`, `executing`, `reviewing`, `done`,
    /// `failed`.
    pub stage: String,
    /// Why it failed.
    pub reason: Option<String>,
    pub plan: PlanReport,
    /// The review loop's round, and its limit.
    pub review_round: u32,
    pub review_rounds: u32,
    pub reviewers: Vec<ReviewerVerdict>,
    /// Each role's task, in the order they first ran.
    pub roles: Vec<RoleTask>,
}

/// The plan: where it is, its version, its steps and how many are done.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlanReport {
    pub file: Option<PathBuf>,
    pub version: u32,
    pub steps_done: u32,
    pub steps_total: u32,
    /// Each step's first line.
    pub steps: Vec<String>,
}

/// A role's task and its session.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoleTask {
    pub role: String,
    /// The role task's name, `SLUG.ROLE` (`ganger status`, `log`, `fix` take it).
    pub task: String,
    pub agent: String,
    pub model: Option<String>,
    pub permission: Permission,
    pub session: Option<String>,
    pub rounds: u32,
    pub last_status: Option<RoundStatus>,
    pub cost_usd: f64,
}

/// The report of the pipeline of task `slug`.
pub fn pipeline_report(ws: &Workspace, slug: &str) -> Result<PipelineReport> {
    let store = ws.open_store()?;
    let task = find_task(&*store, slug)?;
    let record = store.pipeline(task.id)?.ok_or_else(|| no_pipeline(slug))?;
    let files = PlanFiles::of(ws, slug);
    let file = files.current();
    let steps = if record.plan_version > 0 {
        files
            .plan_only(record.plan_version)
            .map(|plan| parse_steps(&plan))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let roles = store
        .role_tasks(task.id)?
        .into_iter()
        .map(|child| RoleTask {
            role: child.role.clone().unwrap_or_default(),
            task: child.slug,
            agent: child.agent,
            model: child.model,
            permission: child.permission,
            session: child.session,
            rounds: child.rounds,
            last_status: child.last_status,
            cost_usd: child.cost_usd,
        })
        .collect();
    Ok(PipelineReport {
        schema: PIPELINE_SCHEMA,
        task: task.slug,
        stage: record.stage,
        reason: record.reason,
        plan: PlanReport {
            file: file.is_file().then_some(file),
            version: record.plan_version,
            steps_done: record.steps_done,
            steps_total: record.steps_total,
            steps: steps
                .iter()
                .map(|s| s.text.lines().next().unwrap_or("").to_owned())
                .collect(),
        },
        review_round: record.review_round,
        review_rounds: ws.config.pipeline.review_rounds,
        reviewers: record.verdicts,
        roles,
    })
}

/// The role task of `task`'s pipeline whose round is running, if any.
pub fn running_role(
    store: &dyn ganger_store::Backend,
    task: &ganger_store::Task,
) -> Result<Option<ganger_store::Task>> {
    Ok(store
        .role_tasks(task.id)?
        .into_iter()
        .find(|role| role.last_status == Some(RoundStatus::Running)))
}

/// Whether task `slug` has a pipeline.
pub fn has_pipeline(store: &dyn ganger_store::Backend, task_id: i64) -> Result<bool> {
    Ok(store.pipeline(task_id)?.is_some())
}

/// The task table with every role task right under its pipeline's task.
pub fn task_tree(store: &dyn ganger_store::Backend) -> Result<TaskList> {
    let summaries: Vec<TaskSummary> = store.task_summaries()?;
    let links = store.role_links()?;
    let child_of = |slug: &str| links.iter().find(|l| l.slug == slug);
    let mut ordered: Vec<(TaskSummary, Option<(String, String)>)> = Vec::new();
    for top in summaries.iter().filter(|s| child_of(&s.slug).is_none()) {
        ordered.push((top.clone(), None));
        for link in links.iter().filter(|l| l.parent == top.slug) {
            if let Some(child) = summaries.iter().find(|s| s.slug == link.slug) {
                ordered.push((
                    child.clone(),
                    Some((link.parent.clone(), link.role.clone())),
                ));
            }
        }
    }
    let (tasks, parents): (Vec<_>, Vec<_>) = ordered.into_iter().unzip();
    let mut list = task_list(tasks);
    for (row, parent) in list.tasks.iter_mut().zip(parents) {
        if let Some((parent, role)) = parent {
            row.parent = Some(parent);
            row.role = Some(role);
        }
    }
    Ok(list)
}

pub(crate) fn no_pipeline(slug: &str) -> EngineError {
    EngineError::invalid(format!("task {slug} has no pipeline")).hint(format!(
        "start one with `ganger plan {slug} --message TEXT`"
    ))
}
