//! `ganger checkout SLUG [PATH]`: any task's tree as a plain worktree at PATH, for an editor or
//! to carry on by hand (docs/trees.md): a new worktree detached at the commit the task's branch
//! is at, with the task's files as they are now (its worktree's snapshot, or its last round's
//! when the worktree is gone) on top as unstaged changes. The task and its worktree are not
//! touched.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::task_worktree::normalize;
use crate::evidence::worktree_lock::worktree_lock;
use crate::task::lookup::find_task;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `ganger checkout` made (`ganger.checkout/1`).
#[derive(Debug, Clone, Serialize)]
pub struct CheckoutReport {
    pub schema: &'static str,
    pub task: String,
    /// The new worktree.
    pub worktree: PathBuf,
    /// The commit it is detached at: the task's branch's.
    pub at: String,
    /// The snapshot whose files it holds.
    pub files: String,
}

/// Makes the plain worktree of task `slug` at `path` (default: `REPO-checkout-SLUG` beside
/// the main checkout).
pub fn checkout(ws: &Workspace, slug: &str, path: Option<&Path>) -> Result<CheckoutReport> {
    crate::base::slug::check_slug(slug)?;
    let Some(store) = ws.existing_store()? else {
        return Err(EngineError::not_found(format!("no task {slug}")));
    };
    let task = find_task(&*store, slug)?;
    let path = match path {
        Some(path) => normalize(&std::env::current_dir().unwrap_or_default().join(path)),
        None => ws
            .repo
            .main
            .with_file_name(format!("{}-checkout-{slug}", ws.repo_name())),
    };
    check_place(ws, &path, &task.worktree)?;
    crate::evidence::tree_overlay::ensure_mounted(ws, &task.worktree)?;
    let files = if task.worktree.is_dir()
        && let Ok(worktree) = ws.repo.open_worktree(&task.worktree)
    {
        crate::evidence::tree_change::snapshot(
            ws,
            &task.worktree,
            &worktree,
            None,
            "ganger checkout",
        )?
        .commit
    } else {
        store
            .round(task.id, None)?
            .and_then(|r| r.snapshot_after)
            .filter(|snapshot| ws.repo.resolve(&format!("{snapshot}^{{commit}}")).is_some())
            .ok_or_else(|| {
                EngineError::invalid(format!(
                    "the worktree of {slug} is gone and this repository has no snapshot of it"
                ))
            })?
    };
    let at = ws
        .repo
        .branch_tip(&task.branch)?
        .or_else(|| task.base_commit.clone())
        .ok_or_else(|| {
            EngineError::invalid(format!("task {slug} has no branch {} here", task.branch))
        })?;
    {
        let _serial = worktree_lock(ws)?;
        if let Err(e) = ws.repo.add_worktree_with_files(&path, &at, &files) {
            let _ = ws.repo.remove_worktree(&path);
            return Err(EngineError::environment(
                format!("failed to check out task {slug} at {}", path.display()),
                e,
            ));
        }
    }
    Ok(CheckoutReport {
        schema: "ganger.checkout/1",
        task: slug.to_owned(),
        worktree: path,
        at,
        files,
    })
}

/// A place a worktree can be made: nothing there (or an empty directory), and not inside the
/// main checkout, `.ganger/` or the task's worktree.
fn check_place(ws: &Workspace, path: &Path, task_worktree: &Path) -> Result<()> {
    let busy = std::fs::read_dir(path).map_or(path.exists(), |mut d| d.next().is_some());
    if busy {
        return Err(EngineError::invalid(format!(
            "{} exists and is not an empty directory",
            path.display()
        )));
    }
    for (inside, what) in [
        (&ws.repo.main, "the main checkout"),
        (&task_worktree.to_path_buf(), "the task's worktree"),
    ] {
        if path.starts_with(inside) {
            return Err(EngineError::invalid(format!(
                "{} is inside {what} ({})",
                path.display(),
                inside.display()
            )));
        }
    }
    Ok(())
}
