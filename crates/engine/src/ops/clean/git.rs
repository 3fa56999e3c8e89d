//! The git side of `ganger clean`: a task's worktree is removed only if ganger made it and
//! it holds no uncommitted change (tracked or untracked; ignored files do not count), its
//! branch is deleted only if its base has every commit of it; `--force` removes both anyway,
//! but first keeps what it removes under the task's refs, as `rewind` does: the worktree's
//! files (untracked ones included) in `refs/ganger/SLUG/cleaned`, the branch's commits in
//! `refs/ganger/SLUG/branch`. Nothing is left half done: a worktree that stays keeps its
//! branch.

use crate::base::clean_report::{LeftoverKind, TaskCleanup, count};
use crate::env::workspace::Workspace;
use ganger_store::Task;

/// What clean may do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mode {
    pub force: bool,
    pub dry_run: bool,
}

/// Removes the task's worktree and branch where that loses nothing (or `--force`).
pub(crate) fn clean_worktree_and_branch(
    ws: &Workspace,
    task: &Task,
    mode: Mode,
    report: &mut TaskCleanup,
) {
    if !task.worktree_made {
        if task.worktree.is_dir() {
            report.kept(
                LeftoverKind::Worktree,
                task.worktree.display().to_string(),
                "ganger did not make it (it was given with --worktree)".into(),
            );
        }
        return;
    }
    if remove_worktree(ws, task, mode, report) {
        delete_branch(ws, task, mode, report);
    } else if ws.repo.branch_exists(&task.branch) {
        report.kept(
            LeftoverKind::Branch,
            task.branch.clone(),
            "its worktree is kept".into(),
        );
    }
}

/// Removes the worktree if it may; returns whether it is gone (or would be, in a dry run).
fn remove_worktree(ws: &Workspace, task: &Task, mode: Mode, report: &mut TaskCleanup) -> bool {
    let path = task.worktree.display().to_string();
    // An overlay's worktree reads as one only while mounted.
    if let Err(e) = crate::evidence::tree_overlay::ensure_mounted(ws, &task.worktree) {
        report.kept(LeftoverKind::Worktree, path, e.to_string());
        return false;
    }
    if !task.worktree.is_dir() {
        // Gone already: forget git's record of it, or its branch could not be deleted.
        if !mode.dry_run {
            let _ = ws.repo.prune_worktrees();
        }
        return true;
    }
    let changes =
        match ws.repo.open_worktree(&task.worktree).and_then(|worktree| {
            crate::evidence::tree_change::status(ws, &task.worktree, &worktree)
        }) {
            Ok(status) => status.entries.len(),
            Err(e) => {
                report.kept(
                    LeftoverKind::Worktree,
                    path,
                    format!("it cannot be read as a worktree: {e}"),
                );
                return false;
            }
        };
    let uncommitted = count(changes, "uncommitted change", "uncommitted changes");
    if changes > 0 && !mode.force {
        report.kept(
            LeftoverKind::Worktree,
            path,
            format!("{uncommitted} (--force removes them)"),
        );
        return false;
    }
    let mut kept_in = None;
    if changes > 0 && !mode.dry_run {
        // --force: the uncommitted work is kept in a snapshot before the worktree goes.
        let name = format!("refs/ganger/{}/cleaned", task.slug);
        let saved = ws.repo.open_worktree(&task.worktree).and_then(|worktree| {
            crate::evidence::tree_change::snapshot(
                ws,
                &task.worktree,
                &worktree,
                Some(&name),
                &format!("ganger: {} as clean --force found it", task.slug),
            )
        });
        match saved {
            Ok(_) => kept_in = Some(name),
            Err(e) => {
                report.kept(
                    LeftoverKind::Worktree,
                    path,
                    format!("its changes could not be saved before removing it: {e}"),
                );
                return false;
            }
        }
    }
    if !mode.dry_run
        && let Err(e) = remove_files(ws, &task.worktree)
    {
        report.kept(
            LeftoverKind::Worktree,
            path,
            format!("removing it failed: {e}"),
        );
        return false;
    }
    let detail = match kept_in {
        Some(name) => format!("with {uncommitted}, kept in {name}"),
        None => format!("with {uncommitted}"),
    };
    report.removed(
        LeftoverKind::Worktree,
        path,
        (changes > 0).then_some(detail),
    );
    true
}

/// Deletes the branch if its base has all its commits (or `--force`).
fn delete_branch(ws: &Workspace, task: &Task, mode: Mode, report: &mut TaskCleanup) {
    if !ws.repo.branch_exists(&task.branch) {
        return;
    }
    let name = task.branch.clone();
    let unmerged = match ws.repo.commits_not_in(&task.branch, &task.base) {
        Ok(n) => n as usize,
        Err(_) if mode.force => 0,
        Err(e) => {
            report.kept(
                LeftoverKind::Branch,
                name,
                format!(
                    "whether {} has its commits cannot be told: {e} (--force deletes it)",
                    task.base
                ),
            );
            return;
        }
    };
    let commits = format!(
        "{} not in {}",
        count(unmerged, "commit", "commits"),
        task.base
    );
    if unmerged > 0 && !mode.force {
        report.kept(
            LeftoverKind::Branch,
            name,
            format!("{commits} (--force deletes them)"),
        );
        return;
    }
    let backup = format!("refs/ganger/{}/branch", task.slug);
    if unmerged > 0 && !mode.dry_run {
        // --force: the commits stay reachable from the task's refs.
        let saved = ws
            .repo
            .resolve(&format!("refs/heads/{}", task.branch))
            .ok_or_else(|| format!("{} names no commit", task.branch))
            .and_then(|tip| {
                ws.repo
                    .git()
                    .run(["update-ref", backup.as_str(), tip.as_str()])
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = saved {
            report.kept(
                LeftoverKind::Branch,
                name,
                format!("its commits could not be saved before deleting it: {e}"),
            );
            return;
        }
    }
    if !mode.dry_run
        && let Err(e) = ws.repo.delete_branch(&task.branch)
    {
        report.kept(
            LeftoverKind::Branch,
            name,
            format!("deleting it failed: {e}"),
        );
        return;
    }
    report.removed(
        LeftoverKind::Branch,
        name,
        (unmerged > 0).then(|| format!("with {commits}, kept in {backup}")),
    );
}

/// Removes the worktree at `path`: an overlay's mount and upper folder, or git's worktree.
fn remove_files(ws: &Workspace, path: &std::path::Path) -> Result<(), String> {
    match crate::evidence::tree_overlay::remove(ws, path) {
        Ok(true) => Ok(()),
        Ok(false) => ws.repo.remove_worktree(path).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}
