//! The report of any round of a task, not only its last (`ganger status SLUG` shows the
//! last): a front end that lets a commander look back at an earlier round (the MCP server's
//! `report` tool) asks here. The lookups of a task and of its round that the API's reads share
//! are here too: what does not exist is `NotFound`, so a front end asks nothing before.

use crate::api::Engine;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::report::RoundReport;
use crate::task::lookup::find_task;
use ganger_store::{Backend, Round, Task};

/// Task `slug` and its round `round` (its last with `None`), or the clear error.
pub(crate) fn task_round(ws: &Workspace, slug: &str, round: Option<u32>) -> Result<(Task, Round)> {
    let store = store_of(ws, slug)?;
    task_round_in(&*store, slug, round)
}

/// The store, when `slug` names a task that could be in it: without one there is no task
/// `slug` (and nothing is made).
pub(crate) fn store_of(ws: &Workspace, slug: &str) -> Result<Box<dyn Backend>> {
    crate::base::slug::check_task_name(slug)?;
    ws.existing_store()?.ok_or_else(|| {
        EngineError::not_found(format!("no task {slug}"))
            .hint("start it with `ganger start`; `ganger status` lists the tasks")
    })
}

/// [`task_round`] in an open store.
pub(crate) fn task_round_in(
    store: &dyn Backend,
    slug: &str,
    round: Option<u32>,
) -> Result<(Task, Round)> {
    let task = find_task(store, slug)?;
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
    /// The task named `slug` (`NotFound` when there is none).
    pub fn task(&self, slug: &str) -> Result<Task> {
        let store = store_of(self.workspace(), slug)?;
        find_task(&*store, slug)
    }

    /// Round `round` of `slug` (its last with `None`), reported as `status` reports it: the
    /// round and the task's budgets read in one opening of the store.
    pub fn report_of(&self, slug: &str, round: Option<u32>) -> Result<RoundReport> {
        let ws = self.workspace();
        let store = store_of(ws, slug)?;
        let (task, found) = task_round_in(&*store, slug, round)?;
        let budgets = crate::evidence::budget::budgets_of(&*store, &task);
        drop(store);
        Ok(crate::evidence::report::round_report_with(
            ws, &task, &found, budgets,
        ))
    }
}
