//! `ganger fix`: the next round of a task, in the same session, then (with `--until-green`)
//! fix rounds while its checks fail.

use crate::error::Result;
pub use crate::fix_round::FixOptions;
use crate::launch::Launched;
use crate::notice::Notices;
use crate::workspace::Workspace;

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
    let launched = crate::fix_round::send_fix_round(ws, options, generation, notices)?;
    crate::until_green::after_launch(ws, launched, limit, notices)
}
