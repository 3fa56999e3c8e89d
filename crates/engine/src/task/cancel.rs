//! `ganger cancel`: stops a task's running round. The cancel is recorded first, then the host
//! gets SIGTERM and stops its agent's whole process group and round (SIGTERM, the grace period,
//! SIGKILL) and records the round as cancelled. A host that does not finish in time is killed
//! and the round settled. A round just started detached has no host named yet: the cancel
//! waits for the name rather than signal the command (or `ganger serve`) that is starting it.

use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::evidence::report::{RoundReport, round_report_with};
use crate::round::reaper::settle_task;
use crate::task::lookup::find_task;
use ganger_events::RoundStatus;
use ganger_sandbox::ProcessId;
use ganger_store::{Backend, ProcessRef, Round, Task};
use rustix::process::{Pid, Signal, kill_process};
use std::time::{Duration, Instant};

/// How long beyond the grace period a host gets to record the cancel.
const EXTRA: Duration = Duration::from_secs(15);

fn signal_host(host: Option<ProcessRef>, signal: Signal) -> bool {
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

/// How often a cancel looks for the host of a round just started detached.
const HOST_LOOK_EVERY: Duration = Duration::from_millis(20);

/// The host of `round`, once the store names it: a detached round is recorded before its host
/// is spawned, and the host is named a moment later (by the command that spawned it, and by
/// the host itself). `None` when the round ended first, or `deadline` passed (the host, which
/// reads the recorded cancel itself, then stops without a signal).
fn host_once_named(
    store: &dyn Backend,
    task: &Task,
    round: &Round,
    deadline: Instant,
) -> Result<Option<ProcessRef>> {
    if round.host.is_some() {
        return Ok(round.host);
    }
    loop {
        let now = store.round(task.id, Some(round.number))?;
        if let Some(host) = now.as_ref().and_then(|r| r.host) {
            return Ok(Some(host));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || store.wait_for_end(&round.claim, Some(left.min(HOST_LOOK_EVERY)))? {
            return Ok(None);
        }
    }
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
    let deadline = Instant::now() + ws.config.defaults.grace.0 + EXTRA;
    let host = host_once_named(&*store, &task, &round, deadline)?;
    signal_host(host, Signal::TERM);
    let left = deadline.saturating_duration_since(Instant::now());
    if !store.wait_for_end(&round.claim, Some(left))? {
        signal_host(host, Signal::KILL);
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
