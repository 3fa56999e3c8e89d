//! A local task's worktree as a reflink copy of its base's cached tree (docs/trees.md): where
//! the file system shares blocks between files (XFS with reflink, btrfs) and the tree cache is
//! on (`[trees] max`), a start registers the task's worktree on its branch without files
//! (`git worktree add --no-checkout -b`), copies the cached tree into it by reflink, and gives
//! it the cached index restamped for the copies: a real git worktree, clean in git's eyes,
//! that took no checkout and shares its blocks with the cache until the task writes.
//!
//! A cached tree whose files no longer match its stamp (someone changed them) is found while
//! it is copied: the copy is removed, the cached tree made again, and the copy made from that.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::worktree_lock::worktree_lock;
use crate::evidence::{tree_cache, tree_files};
use ganger_git::Oid;
use std::path::Path;

/// Makes the task's worktree at `path` on its new `branch` (checked by the caller) as a
/// reflink copy of `base`'s cached tree. `false` when the cache is off or the file system
/// cannot reflink between the cache and `path`: nothing was made.
pub(crate) fn take(ws: &Workspace, path: &Path, branch: &str, base: &Oid) -> Result<bool> {
    if ws.config.trees.max == 0 {
        return Ok(false);
    }
    let (Some(parent), cache) = (path.parent(), tree_cache::cache_dir(ws)) else {
        return Ok(false);
    };
    for dir in [parent, &cache] {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    }
    if !tree_files::can_reflink(&cache, parent) {
        return Ok(false);
    }
    // A second try only when the first found the cached tree modified and discarded it.
    for _ in 0..2 {
        let (held, _) = tree_cache::hold(ws, base)?;
        {
            let _serial = worktree_lock(ws)?;
            ws.repo
                .add_worktree_without_files(path, branch, base)
                .map_err(|e| failed(path, e))?;
        }
        let copied = tree_files::reflink_copy(&held.tree, path, &[&held.index])
            .map_err(|e| EngineError::io("copy the cached tree into", path, e));
        match copied {
            Ok(stamp) if stamp == held.stamp => {
                let finished = finish(ws, path, base, &held.index);
                if finished.is_err() {
                    undo(ws, path, branch);
                }
                return finished.map(|()| true);
            }
            Ok(_) => {
                undo(ws, path, branch);
                let stamp = held.stamp.clone();
                drop(held);
                tree_cache::discard(ws, base, &stamp)?;
            }
            Err(error) => {
                undo(ws, path, branch);
                return Err(error);
            }
        }
    }
    Err(EngineError::environment_message(format!(
        "the cached tree of {base} changed while it was copied twice; see .ganger/trees/cache"
    )))
}

fn failed(path: &Path, e: ganger_git::GitError) -> EngineError {
    EngineError::environment(
        format!("failed to create the worktree {}", path.display()),
        e,
    )
}

/// Gives the copied worktree its index and runs the `post-checkout` hook.
fn finish(ws: &Workspace, path: &Path, base: &Oid, cached_index: &Path) -> Result<()> {
    let index = ganger_git::worktree_index(path).map_err(|e| failed(path, e))?;
    ganger_git::restamp_index(cached_index, &index, path).map_err(|e| failed(path, e))?;
    ws.repo
        .run_post_checkout(path, base)
        .map_err(|e| failed(path, e))
}

/// Removes a worktree this start registered and its branch (nothing of it is left).
fn undo(ws: &Workspace, path: &Path, branch: &str) {
    let _ = ws.repo.remove_worktree(path);
    if path.exists() {
        let _ = std::fs::remove_dir_all(path);
        let _ = ws.repo.prune_worktrees();
    }
    let _ = ws.repo.delete_branch(branch);
}
