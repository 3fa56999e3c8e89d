//! `ganger serve`: the scheduler for queued work, one per repository behind an exclusive
//! `flock` on `.ganger/run/serve.lock` (the file names the holder's pid, so a second one is
//! refused with it). Rounds run in detached hosts, so killing the daemon (even `kill -9`)
//! stops none; a new one settles the rounds whose host died and carries on from the store.
//! While it runs, serve also starts and owns its repository's warm hosts (`warm::keeper`):
//! they end with it.

use super::events::FleetEvents;
use super::scheduler::{Drained, SchedulerOptions, run_scheduler_as};
use super::serve_lock::take_serve_lock;
use crate::base::error::Result;
use crate::env::workspace::Workspace;

/// Runs the scheduler forever (or until `options.drain`), holding the serve lock. `ready` is
/// told the scheduler's claim in the store once the lock and the claim are held, before
/// anything starts: a front end says it runs only then (and its health check watches the
/// claim), and an error of `ready`'s ends `serve` with nothing started.
pub fn serve(
    ws: &Workspace,
    options: SchedulerOptions,
    ready: &mut dyn FnMut(&ganger_store::ClaimKey) -> Result<()>,
    events: &mut dyn FleetEvents,
) -> Result<Drained> {
    let _lock = take_serve_lock(ws)?;
    let store = ws.open_store()?;
    let me = store.claim(&format!("scheduler-{}", crate::base::tokens::new_token()))?;
    ready(me.key())?;
    let _keeper = crate::round::warm::start_keeper(ws)?;
    run_scheduler_as(ws, store, me, options, events)
}
