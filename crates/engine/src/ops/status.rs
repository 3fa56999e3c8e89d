//! `ganger status`: the task table, or the report of one task's last round. Works while a
//! round runs (the host keeps the summary in the store), and settles rounds whose host died
//! before showing them.

use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::evidence::report::{RoundReport, TaskList, round_report_with, task_list};
use crate::round::reaper::{settle_running, settle_task};
use crate::task::lookup::find_task;

/// What `ganger status` shows: its document as it is (`ganger.task-list/1`,
/// `ganger.round-report/1` or `ganger.pipeline/1`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum StatusView {
    List(TaskList),
    Round(Box<RoundReport>),
    /// A task with a pipeline: its stage, plan, verdicts and roles.
    Pipeline(Box<crate::task::pipeline::report::PipelineReport>),
}

/// The status of every task, or of one.
pub fn status(ws: &Workspace, slug: Option<&str>, notices: &mut dyn Notices) -> Result<StatusView> {
    status_of(ws, slug, false, notices)
}

/// The status of every task (with `tree`, each pipeline's role tasks under it), or of one.
pub fn status_of(
    ws: &Workspace,
    slug: Option<&str>,
    tree: bool,
    notices: &mut dyn Notices,
) -> Result<StatusView> {
    let Some(mut store) = ws.existing_store()? else {
        if let Some(slug) = slug {
            crate::base::slug::check_task_name(slug)?;
            return Err(crate::base::error::EngineError::not_found(format!(
                "no task {slug}"
            )));
        }
        return Ok(StatusView::List(task_list(Vec::new())));
    };
    match slug {
        None => {
            settle_running(ws, &mut *store, notices)?;
            let mut list = if tree {
                crate::task::pipeline::report::task_tree(&*store)?
            } else {
                task_list(store.task_summaries()?)
            };
            list.overlaps = crate::evidence::overlap::running_overlaps(ws, &*store)?;
            list.conflicts =
                open_conflicts(&list, ganger_store::ConflictStore::conflicts(&*store)?);
            list.queued_starts = ganger_store::QueueStore::waiting_starts(&*store)?;
            list.killed_starts = crate::evidence::half_made::killed_starts(&*store)?;
            let mut done = ganger_store::EvidenceStore::done_lines(&*store)?;
            let mut warm = crate::round::warm::registry::views(ws, &*store);
            for row in &mut list.tasks {
                row.done = done.remove(&row.slug);
                row.warm = warm.remove(&row.slug);
            }
            Ok(StatusView::List(list))
        }
        Some(slug) => {
            let task = find_task(&*store, slug)?;
            settle_task(ws, &mut *store, &task, notices)?;
            let task = find_task(&*store, slug)?;
            if crate::task::pipeline::report::has_pipeline(&*store, task.id)? {
                for role in ganger_store::PipelineStore::role_tasks(&*store, task.id)? {
                    settle_task(ws, &mut *store, &role, notices)?;
                }
                return Ok(StatusView::Pipeline(Box::new(
                    crate::task::pipeline::report::pipeline_report(ws, slug)?,
                )));
            }
            let round = store.round(task.id, None)?.ok_or_else(|| {
                crate::base::error::EngineError::invalid(format!("task {slug} has no rounds"))
            })?;
            let budgets = crate::evidence::budget::budgets_of(&*store, &task);
            let mut report = round_report_with(ws, &task, &round, budgets);
            report.warm = crate::round::warm::registry::view(ws, &*store, &task.slug);
            Ok(StatusView::Round(Box::new(report)))
        }
    }
}

/// Of the predicted conflicts `all` (docs/land.md), those between the open tasks of `list`
/// (whose worktree is still there), or of one of them with its base.
pub(crate) fn open_conflicts(
    list: &TaskList,
    all: Vec<ganger_store::PredictedConflict>,
) -> Vec<ganger_store::PredictedConflict> {
    let open: std::collections::BTreeSet<&str> = list
        .tasks
        .iter()
        .filter(|t| !t.worktree_gone)
        .map(|t| t.slug.as_str())
        .collect();
    all.into_iter()
        .filter(|c| {
            open.contains(c.task.as_str()) && (c.with_base || open.contains(c.other.as_str()))
        })
        .collect()
}
