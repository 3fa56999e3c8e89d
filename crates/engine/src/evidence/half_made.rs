//! Work a killed command left half done, settled by whoever finds it: a `start` recorded as
//! under way whose command died (its worktree and branch may exist, half made, with no task
//! to show them), and a `clean` whose command died (its claim would otherwise keep the task's
//! rounds from beginning). Liveness is the command's claim in the store, as for round hosts:
//! a dead claim is a dead command, however it died. Until one is settled, `status` and
//! `clean --dry-run` name what it left.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_store::{Backend, PendingStart};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A start killed before its task was recorded, not settled yet: what it may have left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KilledStart {
    pub slug: String,
    /// The worktree it was making (it may not exist).
    pub worktree: PathBuf,
    /// The branch it was making (it may not exist).
    pub branch: String,
}

/// The starts whose command died before their task was recorded (`status` names them);
/// nothing is changed.
pub(crate) fn killed_starts(store: &dyn Backend) -> Result<Vec<KilledStart>> {
    let mut killed = Vec::new();
    for pending in store.pending_starts()? {
        if !store.is_alive(&pending.claim)? {
            killed.push(KilledStart {
                slug: pending.slug,
                worktree: pending.worktree,
                branch: pending.branch,
            });
        }
    }
    Ok(killed)
}

/// What settling each dead start would do (`clean --dry-run`), a line each; nothing is
/// changed.
pub(crate) fn would_settle(ws: &Workspace, store: &dyn Backend) -> Result<Vec<(String, String)>> {
    Ok(killed_starts(store)?
        .into_iter()
        .map(|start| {
            let mut left = Vec::new();
            if start.worktree.exists() {
                left.push(format!("worktree {}", start.worktree.display()));
            }
            if ws.repo.branch_exists(&start.branch) {
                left.push(format!("branch {}", start.branch));
            }
            let what = match left.is_empty() {
                true => "nothing of it is left".to_owned(),
                false => format!("it left {}", left.join(" and ")),
            };
            let line = format!(
                "would settle the start of {} that was killed before its task was recorded: {what}",
                start.slug
            );
            (start.slug, line)
        })
        .collect())
}

/// How long a settle waits for an orphaned `git worktree add` of the dead command.
const ORPHAN_WAIT: Duration = Duration::from_secs(10);

/// Settles every start whose command died; returns the slug and what it did, per start.
pub(crate) fn settle_dead_starts(
    ws: &Workspace,
    store: &mut dyn Backend,
) -> Result<Vec<(String, String)>> {
    let mut done = Vec::new();
    for pending in store.pending_starts()? {
        if let Some(what) = settle_dead_start(ws, store, &pending)? {
            done.push((pending.slug, what));
        }
    }
    Ok(done)
}

/// Settles one start under way if its command died: removes the worktree and branch it made
/// (only when they are what it made: a worktree of this repository on its branch, a branch
/// still at its base commit) and forgets it. `None` while its command lives.
pub(crate) fn settle_dead_start(
    ws: &Workspace,
    store: &mut dyn Backend,
    pending: &PendingStart,
) -> Result<Option<String>> {
    if store.is_alive(&pending.claim)? {
        return Ok(None);
    }
    // The dead command's `git worktree add` may still run, orphaned: let it finish first, or
    // it would make the worktree again after it is removed.
    wait_for_processes_naming(&pending.worktree, ORPHAN_WAIT);
    let mut kept = Vec::new();
    // An overlay's worktree reads as one only while mounted.
    let _ = crate::evidence::tree_overlay::ensure_mounted(ws, &pending.worktree);
    if !pending.worktree.exists() {
        let _ = crate::evidence::tree_overlay::remove(ws, &pending.worktree);
    } else if ws
        .repo
        .discard_half_added_worktree(&pending.worktree)
        .unwrap_or(false)
    {
        // Killed inside its add, before anything was checked out on its branch: gone now.
    } else {
        // On its branch, or a pooled worktree it took and had not put on its branch yet
        // (still detached at the base: no round ran in it).
        let ours = ws.repo.open_worktree(&pending.worktree).is_ok_and(|w| {
            w.branch().as_deref() == Some(pending.branch.as_str())
                || (w.branch().is_none()
                    && crate::evidence::tree_pool::is_pooled(&pending.worktree)
                    && w.head().ok().flatten().as_deref() == Some(pending.base_commit.as_str()))
        });
        if ours {
            // A pooled worktree taken just before the start died may still be recorded
            // where it was in the pool.
            let _ = ws.repo.repair_moved_worktree(&pending.worktree);
            if !matches!(
                crate::evidence::tree_overlay::remove(ws, &pending.worktree),
                Ok(true)
            ) {
                let _ = ws.repo.remove_locked_worktree(&pending.worktree);
            }
        } else {
            kept.push(format!(
                "{} (not a worktree on {})",
                pending.worktree.display(),
                pending.branch
            ));
        }
    }
    // A worktree add killed half way leaves git's record of it.
    let _ = ws.repo.prune_worktrees();
    if ws.repo.branch_exists(&pending.branch) {
        let tip = ws
            .repo
            .resolve_commit(&format!("refs/heads/{}", pending.branch))?;
        if tip.as_deref() == Some(pending.base_commit.as_str()) {
            let _ = ws.repo.delete_branch(&pending.branch);
        } else {
            kept.push(format!("branch {} (it has moved)", pending.branch));
        }
    }
    store.end_start(&pending.slug, &pending.claim)?;
    store.forget_claim(&pending.claim);
    let mut what = format!(
        "settled the start of {} that was killed before its task was recorded",
        pending.slug
    );
    if !kept.is_empty() {
        what.push_str(&format!("; kept {}", kept.join(", ")));
    }
    Ok(Some(what))
}

/// Whether the process of `cmdline` is the FUSE server of an overlay (`fuse-overlayfs`), which
/// names the worktree it is mounted at and serves it until it is unmounted: not a command
/// to wait for.
fn serves_a_mount(cmdline: &[u8]) -> bool {
    let program = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    program.rsplit(|b| *b == b'/').next() == Some(b"fuse-overlayfs".as_slice())
}

/// Waits (at most `limit`) while a process has `path` in its command line (but for an
/// overlay's FUSE server).
pub(crate) fn wait_for_processes_naming(path: &std::path::Path, limit: Duration) {
    let needle = path.as_os_str().as_encoded_bytes();
    let deadline = Instant::now() + limit;
    let naming = || {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return false;
        };
        dir.flatten().any(|entry| {
            let is_pid = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
            is_pid
                && std::fs::read(entry.path().join("cmdline")).is_ok_and(|cmdline| {
                    cmdline.windows(needle.len()).any(|w| w == needle) && !serves_a_mount(&cmdline)
                })
        })
    };
    while naming() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::serves_a_mount;

    #[test]
    fn an_overlays_fuse_server_is_no_command_to_wait_for() {
        assert!(serves_a_mount(b"fuse-overlayfs\0-o\0lowerdir=/a\0/w\0"));
        assert!(serves_a_mount(b"/usr/bin/fuse-overlayfs\0-o\0x\0/w\0"));
        assert!(!serves_a_mount(b"git\0worktree\0add\0/w\0"));
        assert!(!serves_a_mount(b"/opt/fuse-overlayfs-wrapper\0/w\0"));
    }
}
