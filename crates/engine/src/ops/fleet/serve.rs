//! `ganger serve`: the scheduler for queued work, one per repository behind an exclusive
//! `flock` on `.ganger/run/serve.lock` (the file names the holder's pid, so a second one is
//! refused with it). Rounds run in detached hosts, so killing the daemon (even `kill -9`)
//! stops none; a new one settles the rounds whose host died and carries on from the store.
//! While it runs, serve also starts and owns its repository's warm hosts (`warm::keeper`):
//! they end with it.

use super::events::FleetEvents;
use super::scheduler::{Drained, SchedulerOptions, run_scheduler};
use super::serve_lock::take_serve_lock;
use crate::base::error::Result;
use crate::env::workspace::Workspace;

/// Runs the scheduler forever (or until `options.drain`), holding the serve lock. `ready` is
/// called once the lock is held, before anything starts: a front end says it runs only then,
/// and an error of `ready`'s ends `serve` with nothing started.
pub fn serve(
    ws: &Workspace,
    options: SchedulerOptions,
    ready: &mut dyn FnMut() -> Result<()>,
    events: &mut dyn FleetEvents,
) -> Result<Drained> {
    let _lock = take_serve_lock(ws)?;
    ready()?;
    let _keeper = crate::round::warm::start_keeper(ws)?;
    run_scheduler(ws, options, events)
}
