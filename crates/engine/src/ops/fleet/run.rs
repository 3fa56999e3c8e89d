//! `fleet run`: a fleet file's tasks queued, then driven to their end here. When no scheduler
//! runs for the repository this process becomes it (holding the serve lock) until the fleet
//! is drained; when one runs (`ganger serve`, or another `fleet run`), it delivers, and this
//! follows the fleet's status until it is drained. Either way the result is the fleet's
//! status at its end.

use super::events::FleetEvents;
use super::file::Fleet;
use super::scheduler::{Drained, SchedulerOptions, run_scheduler};
use super::serve_lock::{serve_holder, take_serve_lock};
use super::status::{FleetStatus, fleet_status};
use super::submit::{Submitted, submit_fleet};
use crate::base::error::Result;
use crate::env::workspace::Workspace;
use std::time::Duration;

/// How often a `fleet run` that follows another scheduler looks at the fleet's status.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// What a `fleet run` did.
#[derive(Debug, Clone)]
pub struct FleetRun {
    /// What the submission queued and what it found done or under way.
    pub submitted: Submitted,
    /// How this process's scheduler ended, when it was the scheduler.
    pub drained: Option<Drained>,
    /// The pid of the scheduler this run followed, when another one delivered.
    pub followed: Option<u32>,
    /// The fleet at its end.
    pub status: FleetStatus,
}

impl FleetRun {
    /// Whether every task of the fleet ended `done`.
    pub fn all_done(&self) -> bool {
        self.status
            .tasks
            .iter()
            .all(|t| t.last_status.as_deref() == Some("done"))
    }
}

/// Queues `fleet`'s tasks as `commander` and drives them to their end; `submitted` hears what
/// was queued before the first round starts.
pub fn run_fleet(
    ws: &Workspace,
    fleet: &Fleet,
    mut options: SchedulerOptions,
    commander: Option<&str>,
    submitted_now: &mut dyn FnMut(&Submitted, Option<u32>),
    events: &mut dyn FleetEvents,
) -> Result<FleetRun> {
    // The file's global limit holds for everything this loop starts.
    if options.limits.global.is_none() {
        options.limits.global = fleet.limits.global;
    }
    let submitted = submit_fleet(ws, fleet, commander)?;
    let (drained, followed) = match take_serve_lock(ws) {
        Ok(lock) => {
            submitted_now(&submitted, None);
            let drained = run_scheduler(ws, options, events)?;
            drop(lock);
            (Some(drained), None)
        }
        Err(_) => {
            // Another scheduler runs: it delivers; this follows the fleet to its end.
            let pid = serve_holder(ws).unwrap_or(0);
            submitted_now(&submitted, Some(pid));
            while !fleet_status(ws, Some(&fleet.name))?.drained() {
                std::thread::sleep(FOLLOW_EVERY);
            }
            (None, Some(pid))
        }
    };
    Ok(FleetRun {
        submitted,
        drained,
        followed,
        status: fleet_status(ws, Some(&fleet.name))?,
    })
}
