//! `ganger diff`: what a task changed against its base: the worktree as it is now, untracked
//! files included (through a snapshot, so nothing in the worktree or its index is touched),
//! or the last snapshot when the worktree is gone or on another host (fetched from the task's
//! fleet's remote when this repository lacks it).

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::task::lookup::find_task;

/// The task's diff against its base: a patch, or a diffstat with `stat`.
pub fn diff(ws: &Workspace, slug: &str, stat: bool, color: bool) -> Result<Vec<u8>> {
    let (repo, from, to) = task_ends(ws, slug)?;
    Ok(repo.diff_commits(&from, &to, stat, color)?)
}

/// Where the task's patch is read (its worktree, or this repository) and its two ends: the
/// base, and the worktree now (a snapshot) or its last snapshot.
pub(crate) fn task_ends(ws: &Workspace, slug: &str) -> Result<(ganger_git::Repo, String, String)> {
    let Some(store) = ws.existing_store()? else {
        crate::base::slug::check_slug(slug)?;
        return Err(EngineError::not_found(format!("no task {slug}")));
    };
    let task = find_task(&*store, slug)?;
    let base = task
        .base_commit
        .clone()
        .unwrap_or_else(|| task.base.clone());
    crate::evidence::tree_overlay::ensure_mounted(ws, &task.worktree)?;
    // (A directory that is not a worktree of this repository is another host's.)
    if task.worktree.is_dir()
        && let Ok(worktree) = ws.repo.open_worktree(&task.worktree)
    {
        let now = crate::evidence::tree_change::snapshot(
            ws,
            &task.worktree,
            &worktree,
            None,
            "ganger diff",
        )?;
        return Ok((worktree, base, now.commit));
    }
    let last = store
        .round(task.id, None)?
        .and_then(|r| r.snapshot_after)
        .ok_or_else(|| {
            EngineError::invalid(format!(
                "the worktree of {slug} is gone and no snapshot of it was taken"
            ))
        })?;
    // Rounds that ran on other hosts: their snapshots are on the fleet's remote.
    if ws.repo.resolve(&format!("{last}^{{commit}}")).is_none() {
        crate::round::task_move::fetch_task_here(ws, &*store, &task)?;
    }
    Ok((ws.repo.clone(), base, last))
}
