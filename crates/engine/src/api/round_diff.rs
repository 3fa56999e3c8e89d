//! What one round changed: the patch between the snapshots the round host took of the
//! worktree before and after the round (`ganger diff` shows the whole task against its base).
//! A front end that pages through a task's work round by round (the MCP server's `diff`
//! tool) reads it here.

use crate::api::Engine;
use crate::base::error::{EngineError, Result};

impl Engine {
    /// Round `round` of `slug` as a patch (a diffstat with `stat`), without colours.
    pub fn round_diff(&self, slug: &str, round: u32, stat: bool) -> Result<Vec<u8>> {
        let (repo, before, after) = round_ends(self.workspace(), slug, round)?;
        Ok(repo.diff_commits(&before, &after, stat, false)?)
    }
}

/// Where round `round`'s patch is read, and its two ends: the snapshots the round host took
/// before and after it.
pub(crate) fn round_ends(
    ws: &crate::env::workspace::Workspace,
    slug: &str,
    round: u32,
) -> Result<(ganger_git::Repo, String, String)> {
    let (_, found) = crate::api::round_report::task_round(ws, slug, Some(round))?;
    let (Some(before), Some(after)) = (found.snapshot_before, found.snapshot_after) else {
        return Err(EngineError::invalid(format!(
            "round {round} of {slug} has no snapshots to compare (it is running, or its \
             agent never started)"
        ))
        .hint("the whole task's diff has no such limit: leave out the round"));
    };
    Ok((ws.repo.clone(), before, after))
}
