//! The reaper: every command that looks at rounds first settles the ones whose host is dead
//! (its claim has ended without the round ending), stopping whatever of them is left and recording them as
//! `interrupted`, so that a killed host is never shown as running and never blocks a fix. It
//! also removes the temporary directories that killed hosts (warm hosts too) left behind
//! ([`crate::env::agent_tmp_sweep`]).

use crate::base::error::Result;
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::round::settle_dead_round;
use ganger_events::RoundStatus;
use ganger_store::{Backend, Task};

/// Settles every running round whose host is gone.
pub fn settle_running(
    ws: &Workspace,
    store: &mut dyn Backend,
    notices: &mut dyn Notices,
) -> Result<()> {
    crate::env::agent_tmp_sweep::now_and_then();
    for (task, round) in store.dead_rounds()? {
        if settle_dead_round(ws, store, &task, &round)? {
            notices.notice(Notice::Settled {
                slug: task.slug.clone(),
                number: round.number,
            });
        }
    }
    Ok(())
}

/// Settles the running round of one task, if its host is gone.
pub fn settle_task(
    ws: &Workspace,
    store: &mut dyn Backend,
    task: &Task,
    notices: &mut dyn Notices,
) -> Result<()> {
    if let Some(round) = store.round(task.id, None)?
        && round.status == RoundStatus::Running
        && settle_dead_round(ws, store, task, &round)?
    {
        notices.notice(Notice::Settled {
            slug: task.slug.clone(),
            number: round.number,
        });
    }
    Ok(())
}
