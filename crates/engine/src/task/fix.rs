//! `ganger fix`: the next round of a task, in the same session, then (with `--until-green`)
//! fix rounds while its checks fail.

use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::round::launch::Launched;
pub use crate::task::fix_round::FixOptions;

/// Runs the next round of a task.
pub fn fix(ws: &Workspace, options: FixOptions, notices: &mut dyn Notices) -> Result<Launched> {
    fix_sent_under(ws, options, None, notices)
}

/// Runs the next round of a task under `generation`, the task's generation when the round
/// was asked for (a queued round's); `None`: the generation it has now. The store refuses
/// the round (`Stale`) when an ownership change has ended that generation.
pub(crate) fn fix_sent_under(
    ws: &Workspace,
    options: FixOptions,
    generation: Option<i64>,
    notices: &mut dyn Notices,
) -> Result<Launched> {
    let limit = options.until_green;
    let launched = crate::task::fix_round::send_fix_round(ws, options, generation, notices)?;
    crate::task::until_green::after_launch(ws, launched, limit, notices)
}
