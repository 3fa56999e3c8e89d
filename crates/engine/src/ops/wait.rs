//! `ganger wait`: blocks until the task's running round ends and returns its report. It
//! waits on the round's claim in the store, so it wakes the moment the host is gone (finished
//! or dead), with no polling interval to wait out; while a fix loop (`--until-green`) holds
//! the task's loop claim, it waits for the loop's last round.

use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::evidence::report::{RoundReport, round_report_with};
use crate::round::reaper::settle_task;
use crate::task::lookup::find_task;
use ganger_events::RoundStatus;
use std::time::{Duration, Instant};

/// How a wait ended.
#[derive(Debug, Clone)]
pub enum WaitOutcome {
    /// The round has ended.
    Ended(Box<RoundReport>),
    /// The time limit passed with the round still running.
    StillRunning {
        number: u32,
        host_pid: Option<i32>,
        started_at: String,
    },
}

/// Waits for the running round of `slug`, at most `timeout`.
pub fn wait(
    ws: &Workspace,
    slug: &str,
    timeout: Option<Duration>,
    notices: &mut dyn Notices,
) -> Result<WaitOutcome> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let Some(mut store) = ws.existing_store()? else {
        crate::base::slug::check_slug(slug)?;
        return Err(crate::base::error::EngineError::not_found(format!(
            "no task {slug}"
        )));
    };
    let task = find_task(&*store, slug)?;
    loop {
        let round = store.round(task.id, None)?.ok_or_else(|| {
            crate::base::error::EngineError::invalid(format!("task {slug} has no rounds"))
        })?;
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let looping = store.claim_key(&crate::task::rules::loop_claim_name(slug));
        if round.status != RoundStatus::Running
            && left != Some(Duration::ZERO)
            && store.is_alive(&looping)?
        {
            // A fix loop (`--until-green`) is between rounds, or after its last: its end is
            // what the caller waits for.
            store.wait_for_end(&looping, left)?;
            continue;
        }
        if round.status != RoundStatus::Running {
            let task = find_task(&*store, slug)?;
            let budgets = crate::evidence::budget::budgets_of(&*store, &task);
            return Ok(WaitOutcome::Ended(Box::new(round_report_with(
                ws, &task, &round, budgets,
            ))));
        }
        if left == Some(Duration::ZERO) {
            return Ok(WaitOutcome::StillRunning {
                number: round.number,
                host_pid: round.host.map(|h| h.pid),
                started_at: crate::evidence::report::local_time(round.started_at),
            });
        }
        if store.wait_for_end(&round.claim, left)? {
            // The host is gone: either it recorded the end, or it died and we settle it.
            settle_task(ws, &mut *store, &task, notices)?;
        }
    }
}
