//! A new task's worktree and branch. `plan` decides and checks everything before anything is
//! made (the path, the branch name held to `git check-ref-format`, the base resolved to a
//! commit with `--end-of-options`), so that a name git would read as an option (`--branch=-D`
//! deleted an unmerged branch once) is refused with exit 2 and nothing changed; `make` then
//! runs `git worktree add` with the checked branch and the base's commit id, never a name.

use crate::base::error::{EngineError, Result};
use crate::base::notice::TreeMade;
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::evidence::tree_mounter::Mounter;
use crate::evidence::worktree_lock::worktree_lock;
use crate::evidence::{tree_made, tree_overlay, tree_pool, tree_reflink};
use ganger_git::Oid;
use ganger_store::{Backend, ClaimKey, PendingStart, StoreError, now_ms};
use std::path::{Path, PathBuf};

/// A new task's worktree, checked and not yet made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedWorktree {
    pub path: PathBuf,
    pub branch: String,
    /// The base as given (`main`), which `merge` merges into.
    pub base: String,
    /// The commit the base names now, which the branch starts at.
    pub base_commit: Oid,
    /// Whether the task runs sandboxed, so that its tree may be an overlay.
    pub sandboxed: bool,
    /// Whether its sandbox runs the agent as this user, so that the overlay may be a FUSE
    /// mount where this process cannot mount the kernel's.
    pub as_the_user: bool,
}

/// Checks a new task's branch and base and plans its worktree; makes nothing.
pub(crate) fn plan(
    ws: &Workspace,
    slug: &str,
    base: Option<&str>,
    branch: Option<&str>,
) -> Result<PlannedWorktree> {
    let (path, default_branch) = default_worktree(ws, slug);
    let (branch, branch_from) = match branch {
        Some(branch) => (branch.to_owned(), "--branch".to_owned()),
        None => (default_branch, "worktree.branch in ganger.toml".to_owned()),
    };
    if let Err(bad) = ws.repo.check_branch_name(&branch)? {
        return Err(EngineError::invalid(format!(
            "{branch_from} {branch:?} cannot name a branch: {}",
            bad.0
        )));
    }
    let base = base.map_or_else(|| ws.config.defaults.base.clone(), str::to_owned);
    let base_commit = base_commit(ws, &base)?;
    Ok(PlannedWorktree {
        path,
        branch,
        base,
        base_commit,
        sandboxed: false,
        as_the_user: true,
    })
}

/// The commit `base` names, or why it names none.
pub(crate) fn base_commit(ws: &Workspace, base: &str) -> Result<Oid> {
    if base.starts_with('-') {
        return Err(EngineError::invalid(format!(
            "base {base:?} begins with '-': give a branch or commit of this repository"
        )));
    }
    if let Some(commit) = ws.repo.resolve_commit(base)? {
        return Ok(commit);
    }
    let error = EngineError::invalid(format!("base {base:?} names no commit of this repository"));
    Err(if ws.repo.resolve_commit("HEAD")?.is_none() {
        error.hint("the repository has no commits yet: commit something to start tasks from")
    } else {
        error.hint("give an existing branch or commit with --base")
    })
}

/// Refuses a planned worktree whose path or branch exists already.
pub(crate) fn refuse_existing(ws: &Workspace, planned: &PlannedWorktree) -> Result<()> {
    if planned.path.exists() {
        return Err(
            EngineError::invalid(format!("{} exists already", planned.path.display())).hint(
                format!(
                    "pass --worktree {} to give the task to it",
                    planned.path.display()
                ),
            ),
        );
    }
    if ws.repo.branch_exists(&planned.branch) {
        return Err(
            EngineError::invalid(format!("branch {} exists already", planned.branch))
                .hint("name another with --branch, or give its worktree with --worktree"),
        );
    }
    Ok(())
}

/// Records the start of task `slug` as under way (settling a dead start of the same slug
/// first), then makes its planned worktree, so that a start killed at any point leaves a
/// record that `start` again or `clean` settles. `claim` is the starting command's, held
/// until its task is recorded (which ends the record) or `abandon` is called.
pub(crate) fn begin(
    ws: &Workspace,
    store: &mut dyn Backend,
    planned: &PlannedWorktree,
    slug: &str,
    commander: &str,
    claim: &ClaimKey,
    notices: &mut dyn Notices,
) -> Result<()> {
    // A dead start of the same slug left what it made: settled before anything is judged.
    // (`settle_dead_start` leaves one whose command lives.)
    let earlier = store.pending_starts()?.into_iter().find(|p| p.slug == slug);
    if let Some(earlier) = earlier {
        crate::evidence::half_made::settle_dead_start(ws, store, &earlier)?;
    }
    if let Err(exists) = refuse_existing(ws, planned) {
        // Made by a start of the same slug that is still under way, or that has recorded it.
        return Err(being_started(store, slug)?.unwrap_or(exists));
    }
    let pending = PendingStart {
        slug: slug.to_owned(),
        worktree: planned.path.clone(),
        branch: planned.branch.clone(),
        base_commit: planned.base_commit.clone(),
        claim: claim.clone(),
        commander: commander.to_owned(),
        started_at: now_ms(),
    };
    for _ in 0..2 {
        match store.begin_start(&pending) {
            Ok(()) => {
                return make(ws, planned, notices).inspect_err(|_| {
                    let _ = store.end_start(slug, claim);
                });
            }
            Err(StoreError::StartPending { slug, claim }) => {
                if store.is_alive(&claim)? {
                    return Err(starting(&slug));
                }
                let dead = store
                    .pending_starts()?
                    .into_iter()
                    .find(|p| p.slug == slug && p.claim == claim);
                if let Some(dead) = dead {
                    crate::evidence::half_made::settle_dead_start(ws, store, &dead)?;
                }
                refuse_existing(ws, planned)?;
            }
            Err(StoreError::SlugTaken(slug)) => {
                return Err(EngineError::conflict(format!("task {slug} exists already")));
            }
            Err(other) => return Err(other.into()),
        }
    }
    Err(starting(slug))
}

/// A start of `slug` under way in a live command: it passes (the start records its task, or
/// dies and is settled by the next start), so a queued start meeting it is sent again later.
fn starting(slug: &str) -> EngineError {
    EngineError::passing(format!(
        "task {slug} is being started by another ganger command"
    ))
    .hint(format!(
        "see it with `ganger status {slug}` once it has started"
    ))
}

/// Why a start of `slug` found its worktree or branch made, when another start of it did:
/// one still under way, or one that has recorded its task.
fn being_started(store: &dyn Backend, slug: &str) -> Result<Option<EngineError>> {
    // The start under way first, then the task: the transaction that records the task ends
    // the start's record, so a start gone by the first look has its task by the second.
    for pending in store.pending_starts()? {
        if pending.slug == slug && store.is_alive(&pending.claim)? {
            return Ok(Some(starting(slug)));
        }
    }
    Ok(store
        .task(slug)?
        .is_some()
        .then(|| EngineError::conflict(format!("task {slug} exists already"))))
}

/// Undoes a begun start whose task could not be recorded: removes the worktree and branch
/// it made and its record.
pub(crate) fn abandon(
    ws: &Workspace,
    store: &mut dyn Backend,
    planned: &PlannedWorktree,
    slug: &str,
    claim: &ClaimKey,
) {
    if !matches!(tree_overlay::remove(ws, &planned.path), Ok(true)) {
        let _ = ws.repo.remove_worktree(&planned.path);
    }
    let _ = ws.repo.delete_branch(&planned.branch);
    let _ = store.end_start(slug, claim);
}

/// Makes the planned worktree and branch (checked absent by `begin`), one add at a time per
/// repository.
fn make(ws: &Workspace, planned: &PlannedWorktree, notices: &mut dyn Notices) -> Result<()> {
    let (path, branch, base) = (&planned.path, &planned.branch, &planned.base_commit);
    let overlay = match Mounter::for_task(planned.sandboxed, planned.as_the_user) {
        Some(mounter) => tree_overlay::take(ws, path, branch, base, mounter)?,
        None => None,
    };
    let shared = overlay.clone().unwrap_or_default();
    let made = if overlay.is_some() {
        TreeMade::Overlay
    } else if tree_reflink::take(ws, path, branch, base)? {
        TreeMade::Reflink
    } else if tree_pool::take(ws, path, branch, base)? {
        TreeMade::Pool
    } else {
        // git reads every worktree's entry while it adds one, and a concurrent add's
        // half-written entry makes it fail: one add at a time per repository.
        let _serial = worktree_lock(ws)?;
        ws.repo.add_worktree(path, branch, base).map_err(|e| {
            EngineError::environment(
                format!("failed to create the worktree {}", path.display()),
                e,
            )
        })?;
        TreeMade::Checkout
    };
    tree_made::record(path, made, &shared);
    tree_pool::refill_in_background(ws, base);
    notices.notice(Notice::WorktreeCreated {
        path: planned.path.clone(),
        branch: planned.branch.clone(),
        base: planned.base.clone(),
        made,
        shared,
    });
    Ok(())
}

/// The worktree path and branch ganger gives task `slug` unless told otherwise.
pub(crate) fn default_worktree(ws: &Workspace, slug: &str) -> (PathBuf, String) {
    let repo = ws.repo_name();
    let path = ws
        .repo
        .main
        .join(fill(&ws.config.worktree.path, &repo, slug));
    (
        normalize(&path),
        fill(&ws.config.worktree.branch, &repo, slug),
    )
}

fn fill(template: &str, repo: &str, slug: &str) -> String {
    template.replace("{repo}", repo).replace("{slug}", slug)
}

/// `a/b/../c` as `a/c`, without touching the file system (the path may not exist yet).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The task's worktree, checked again before each round: still a directory (not a symlink to
/// somewhere else), a linked worktree of this repository (not the main checkout), on the
/// task's branch. A worktree replaced by a link to the main checkout would otherwise have the
/// agent work there.
pub(crate) fn check_task_worktree(
    ws: &Workspace,
    task: &ganger_store::Task,
) -> Result<ganger_git::Repo> {
    let path = &task.worktree;
    tree_overlay::ensure_mounted(ws, path)?;
    let gone = || {
        EngineError::invalid(format!(
            "the worktree {} of task {} is gone",
            path.display(),
            task.slug
        ))
    };
    let meta = std::fs::symlink_metadata(path).map_err(|_| gone())?;
    if meta.file_type().is_symlink() {
        return Err(EngineError::invalid(format!(
            "the worktree {} of task {} has been replaced by a symbolic link; no round runs there",
            path.display(),
            task.slug
        )));
    }
    if !meta.is_dir() {
        return Err(gone());
    }
    let opened = ws.repo.open_worktree(path).map_err(|e| {
        EngineError::invalid(format!(
            "the worktree {} of task {} is no longer a worktree of this repository ({e})",
            path.display(),
            task.slug
        ))
    })?;
    if opened.worktree == ws.repo.main || opened.git_dir == ws.repo.common_dir {
        return Err(EngineError::invalid(format!(
            "the worktree {} of task {} is now the main checkout; no round runs there",
            path.display(),
            task.slug
        )));
    }
    if task.branch != DETACHED && opened.branch().as_deref() != Some(task.branch.as_str()) {
        return Err(EngineError::invalid(format!(
            "the worktree {} of task {} is on {}, not on the task's branch {}",
            path.display(),
            task.slug,
            opened.branch().unwrap_or_else(|| "a detached HEAD".into()),
            task.branch
        ))
        .hint(format!("check out {} there again", task.branch)));
    }
    Ok(opened)
}

/// The branch recorded for a task given a worktree whose `HEAD` was detached.
pub(crate) const DETACHED: &str = "(detached)";
