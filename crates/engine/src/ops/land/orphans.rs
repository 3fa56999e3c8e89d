//! The fix rounds a lander sent (`--fix`) and did not live to follow up: killed, or stopped
//! with its daemon. The next lander of the base adopts them and follows each up as its own
//! (`fix::follow_up`): queued again once it passes, exactly once.
//!
//! Nothing more is recorded for this: such a round is the first round its task's land
//! commander started after the item was sent back, of a task whose last item is that one
//! (not queued again since). It is waited for while it runs, and followed up once it passed
//! with no conflict marker left; one that failed leaves its task sent back, for a person or
//! another `ganger fix`.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_store::{Backend, LandItem};
use std::collections::HashMap;

/// A fix round left to follow up: the item it fixes and the round.
pub(crate) struct Orphan {
    pub item: LandItem,
    pub round: u32,
}

/// The fix rounds of `base` (every base: `None`) still to follow up.
pub(crate) fn orphan_fixes(
    ws: &Workspace,
    store: &dyn Backend,
    base: Option<&str>,
) -> Result<Vec<Orphan>> {
    let mut last: HashMap<i64, LandItem> = HashMap::new();
    for item in store.land_items(false)? {
        let later = last.get(&item.task_id).is_none_or(|seen| seen.id < item.id);
        if later {
            last.insert(item.task_id, item);
        }
    }
    let mut found = Vec::new();
    for item in last.into_values() {
        if item.state != "returned" || !item.fix || base.is_some_and(|b| b != item.base) {
            continue;
        }
        let Some(sent_back) = item.ended_at else {
            continue;
        };
        let Some(round) = store
            .rounds(item.task_id)?
            .into_iter()
            .filter(|r| r.started_at >= sent_back && r.commander == item.commander)
            .min_by_key(|r| r.number)
        else {
            continue;
        };
        let waiting = match round.ended_at {
            None => true,
            Some(_) => round.checks_passed() && !marked(ws, store, &item),
        };
        if waiting {
            found.push(Orphan {
                item,
                round: round.number,
            });
        }
    }
    found.sort_by_key(|o| o.item.id);
    Ok(found)
}

/// Whether the task's worktree still holds a conflict marker in a file of its merge (or is
/// gone: then there is nothing to follow up).
fn marked(ws: &Workspace, store: &dyn Backend, item: &LandItem) -> bool {
    let Ok(task) = crate::task::lookup::find_task(store, &item.slug) else {
        return true;
    };
    let Ok(worktree) = crate::evidence::task_worktree::check_task_worktree(ws, &task) else {
        return true;
    };
    crate::ops::land::fix::marked(&worktree).unwrap_or(true)
}
