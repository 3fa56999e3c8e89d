//! Finding a task: by its name, with a round whose host died settled first, and refused while
//! one of its rounds runs.

use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::round::reaper::settle_task;
use ganger_store::Store;

/// The task named `slug`, or a clear error.
pub(crate) fn find_task(store: &dyn Store, slug: &str) -> Result<ganger_store::Task> {
    crate::base::slug::check_task_name(slug)?;
    store.task(slug)?.ok_or_else(|| {
        EngineError::not_found(format!("no task {slug}"))
            .hint("start it with `ganger start`; `ganger status` lists the tasks")
    })
}

/// The store and the task named `slug`, a round of it whose host died settled first; a clear
/// error when there is no such task (or no store yet).
pub(crate) fn settled_task(
    ws: &Workspace,
    slug: &str,
    notices: &mut dyn Notices,
) -> Result<(Box<dyn ganger_store::Backend>, ganger_store::Task)> {
    let Some(mut store) = ws.existing_store()? else {
        crate::base::slug::check_task_name(slug)?;
        return Err(EngineError::not_found(format!("no task {slug}")));
    };
    let task = find_task(&*store, slug)?;
    settle_task(ws, &mut *store, &task, notices)?;
    Ok((store, task))
}

/// Every round of `task`, refused (with how to wait or cancel) while one of them runs.
pub(crate) fn idle_rounds(
    store: &dyn Store,
    task: &ganger_store::Task,
) -> Result<Vec<ganger_store::Round>> {
    let rounds = store.rounds(task.id)?;
    if let Some(running) = rounds
        .iter()
        .find(|r| r.status == ganger_events::RoundStatus::Running)
    {
        return Err(busy(
            &task.slug,
            running.number,
            running.host.map(|h| h.pid),
        ));
    }
    Ok(rounds)
}

pub(crate) fn busy(slug: &str, number: u32, host_pid: Option<i32>) -> EngineError {
    let host = host_pid
        .map(|pid| format!(" (host pid {pid})"))
        .unwrap_or_default();
    EngineError::passing(format!("round {number} of {slug} is still running{host}")).hint(format!(
        "wait for it with `ganger wait {slug}`, or stop it with `ganger cancel {slug}`"
    ))
}
