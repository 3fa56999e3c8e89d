//! `ganger cancel`: stops a task's running round. The cancel is recorded first, then the host
//! gets SIGTERM and stops its agent's whole process group and round (SIGTERM, the grace period,
//! SIGKILL) and records the round as cancelled. A host that does not finish in time is killed
//! and the round settled.

use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::evidence::report::{RoundReport, round_report_with};
use crate::round::reaper::settle_task;
use crate::task::lookup::find_task;
use ganger_events::RoundStatus;
use ganger_sandbox::ProcessId;
use rustix::process::{Pid, Signal, kill_process};
use std::time::Duration;

/// How long beyond the grace period a host gets to record the cancel.
const EXTRA: Duration = Duration::from_secs(15);

fn signal_host(host: Option<ganger_store::ProcessRef>, signal: Signal) -> bool {
    let Some(host) = host else { return false };
    let id = ProcessId {
        pid: host.pid,
        start_ticks: host.start_ticks,
    };
    if !id.is_alive() {
        return false;
    }
    Pid::from_raw(host.pid).is_some_and(|pid| kill_process(pid, signal).is_ok())
}

/// Cancels the running round of `slug` and returns its report.
pub fn cancel(
    ws: &Workspace,
    slug: &str,
    as_name: Option<&str>,
    notices: &mut dyn Notices,
) -> Result<RoundReport> {
    let (mut store, task) = crate::task::lookup::settled_task(ws, slug, notices)?;
    let me = commander(as_name);
    crate::task::rules::require_owner(&task, &me, "cancel")?;
    // A pipeline's task has no round of its own running: its running role's round is the
    // one to stop (which stops the pipeline).
    let task = crate::task::pipeline::report::running_role(&*store, &task)?.unwrap_or(task);
    let slug = task.slug.clone();
    let slug = slug.as_str();
    let round = store
        .round(task.id, None)?
        .ok_or_else(|| EngineError::invalid(format!("task {slug} has no rounds")))?;
    if round.status != RoundStatus::Running {
        return Err(EngineError::invalid(format!(
            "no round of {slug} is running; round {} ended {}",
            round.number, round.status
        )));
    }
    store.request_cancel(round.id, &me)?;
    signal_host(round.host, Signal::TERM);
    let limit = ws.config.defaults.grace.0 + EXTRA;
    if !store.wait_for_end(&round.claim, Some(limit))? {
        signal_host(round.host, Signal::KILL);
        store.wait_for_end(&round.claim, Some(Duration::from_secs(5)))?;
    }
    settle_task(ws, &mut *store, &task, notices)?;
    let task = find_task(&*store, slug)?;
    let round = store.round(task.id, Some(round.number))?.ok_or_else(|| {
        EngineError::invalid(format!("round {} of {slug} vanished", round.number))
    })?;
    let budgets = crate::evidence::budget::budgets_of(&*store, &task);
    Ok(round_report_with(ws, &task, &round, budgets))
}
