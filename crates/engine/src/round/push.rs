//! The round of a task whose fleet names a git remote pushes the task's branch and snapshot
//! refs to it before its end is recorded: once the store says a round ended, its work is on
//! the remote, whichever host takes the task's next round, and even when the worker that
//! delivered it died before it looked at the round (a push left to the scheduler would go with
//! it). The round's host holds its lease all the while, so a host that dies mid-push leaves an
//! interrupted round to continue, never an ended one whose work is nowhere.

use ganger_git::{Repo, remote as git_remote};
use ganger_store::{Backend, Task};
use std::time::{Duration, Instant};

/// How long a round host tries to push before it records the round's end without: the
/// scheduler that delivered the round then tries again.
const PUSH_PATIENCE: Duration = Duration::from_secs(30);

/// Pushes `task`'s branch and refs from `worktree`'s repository when the task's fleet names a
/// remote and that repository is a clone of it. `Some` says why the work is not on the
/// remote: the push failed for [`PUSH_PATIENCE`], or the store could not say which remote.
pub(super) fn push_round(store: &dyn Backend, task: &Task, worktree: &Repo) -> Option<String> {
    let remote = match fleet_remote(store, task) {
        Ok(Some(remote)) => remote,
        Ok(None) => return None,
        Err(e) => return Some(format!("its fleet's remote could not be read: {e}")),
    };
    // A worktree of a checkout that is not the remote's clone (a round run by hand on the
    // task's first host): its work travels by the scheduler's push, as before.
    if git_remote::origin_url(&worktree.main).as_deref() != Some(remote.as_str()) {
        return None;
    }
    let since = Instant::now();
    let mut wait = Duration::from_millis(200);
    loop {
        match git_remote::push_task(&worktree.main, &task.branch, &task.slug) {
            Ok(()) => return None,
            Err(e) if git_remote::push_refused(&e) || since.elapsed() + wait >= PUSH_PATIENCE => {
                return Some(format!("its work is not on the remote {remote} yet: {e}"));
            }
            Err(_) => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// The remote of `task`'s fleet, if it belongs to one that names a remote.
fn fleet_remote(
    store: &dyn Backend,
    task: &Task,
) -> Result<Option<String>, ganger_store::StoreError> {
    let Some(fleet) = store.task_fleet(task.id)? else {
        return Ok(None);
    };
    Ok(store
        .fleets()?
        .into_iter()
        .find(|f| f.name == fleet)
        .and_then(|f| f.remote))
}
