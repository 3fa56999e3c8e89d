//! The report of any round of a task, not only its last (`ganger status SLUG` shows the
//! last): a front end that lets a commander look back at an earlier round (the MCP server's
//! `report` tool) asks here. The lookup of a task's round is here too, for `api_round_diff`;
//! it asks the store through the workspace alone, so that it does not depend on where the
//! command modules keep their own lookups.

use crate::api::Engine;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::report::RoundReport;
use ganger_store::{Backend, Round, Task};

/// Task `slug` and its round `round` (its last with `None`), or the clear error.
pub(crate) fn task_round(ws: &Workspace, slug: &str, round: Option<u32>) -> Result<(Task, Round)> {
    let store = opened(ws, slug)?;
    task_round_in(&*store, slug, round)
}

/// The store, when `slug` names a task that could be in it.
fn opened(ws: &Workspace, slug: &str) -> Result<Box<dyn Backend>> {
    crate::base::slug::check_task_name(slug)?;
    ws.existing_store()?.ok_or_else(|| no_task(slug))
}

fn no_task(slug: &str) -> EngineError {
    EngineError::not_found(format!("no task {slug}"))
        .hint("start it with `ganger start`; `ganger status` lists the tasks")
}

/// [`task_round`] in an open store.
fn task_round_in(store: &dyn Backend, slug: &str, round: Option<u32>) -> Result<(Task, Round)> {
    let task = store.task(slug)?.ok_or_else(|| no_task(slug))?;
    let found = store.round(task.id, round)?.ok_or_else(|| match round {
        Some(n) => EngineError::not_found(format!(
            "task {slug} has no round {n} (it has {})",
            task.rounds
        )),
        None => EngineError::not_found(format!("task {slug} has no rounds")),
    })?;
    Ok((task, found))
}

impl Engine {
    /// Round `round` of `slug` (its last with `None`), reported as `status` reports it: the
    /// round and the task's budgets read in one opening of the store.
    pub fn report_of(&self, slug: &str, round: Option<u32>) -> Result<RoundReport> {
        let ws = self.workspace();
        let store = opened(ws, slug)?;
        let (task, found) = task_round_in(&*store, slug, round)?;
        let budgets = crate::evidence::budget::budgets_of(&*store, &task);
        drop(store);
        Ok(crate::evidence::report::round_report_with(
            ws, &task, &found, budgets,
        ))
    }
}
