//! Where an attempt is: still working (a round running, or its fix loop between rounds), or
//! ended, passing or not; what keeps it working is watched (`wake.rs`), so that its end wakes
//! the race's driver. Read by the driver's looks and by `--first-green`'s cancels.

use super::wake::Wake;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::round::reaper::settle_task;
use ganger_events::RoundStatus;
use ganger_store::{Backend, Task};

/// Where an attempt is: still working (a round running, or its fix loop between rounds), or
/// ended, passing or not. What keeps it working (its round's host, its fix loop) is watched,
/// so that its end wakes the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Working,
    Passed,
    Ended,
}

pub(super) fn state(
    store: &mut dyn Backend,
    ws: &Workspace,
    task: &Task,
    wake: &mut Wake,
    notices: &mut dyn Notices,
) -> Result<State> {
    let Some(mut round) = store.round(task.id, None)? else {
        return Ok(State::Working);
    };
    if round.status == RoundStatus::Running {
        if store.is_alive(&round.claim)? {
            wake.watch(&*store, &round.claim);
            return Ok(State::Working);
        }
        // Its host died: settled now, and its end read again.
        settle_task(ws, store, task, notices)?;
        match store.round(task.id, None)? {
            Some(settled) if settled.status != RoundStatus::Running => round = settled,
            _ => return Ok(State::Working),
        }
    }
    let looping = store.claim_key(&crate::task::rules::loop_claim_name(&task.slug));
    if round.checks_passed() {
        return Ok(State::Passed);
    }
    if store.is_alive(&looping)? {
        wake.watch(&*store, &looping);
        return Ok(State::Working);
    }
    Ok(State::Ended)
}
