//! A sandboxed task's worktree as an overlay (docs/trees.md): the base's cached tree is the
//! read-only lower layer, the task's own upper folder is above it, and the merged view is
//! mounted by ganger on the host at the task's worktree path (the kernel's overlayfs as root,
//! `fuse-overlayfs` for a bubblewrap task otherwise: `tree_mounter.rs`). Starting one
//! copies no file: git registers the worktree on its branch without files, the cached index
//! is its index (the merged view shows the cached files' own stat data, so git finds it clean
//! without reading them), and the task's writes land in the upper folder only.
//!
//! ```text
//! .ganger/trees/upper/NAME/base    the base commit below (the cache keeps it while this is)
//! .ganger/trees/upper/NAME/path    the worktree the overlay is mounted at
//! .ganger/trees/upper/NAME/upper/  the task's change: its files, whiteouts for deletions
//! .ganger/trees/upper/NAME/work/   overlayfs's own work folder
//! .ganger/trees/upper/NAME/mounter  who mounts it: `kernel` or `fuse`
//! ```
//!
//! The worktree's `.git` file lives in the upper folder: with the overlay not mounted (after
//! a reboot) the path is an empty directory that no git command mistakes for a worktree whose
//! files were all deleted, and [`ensure_mounted`] mounts it again before a round or a command
//! reads it. Where neither can mount, the start falls back to a copy or a checkout.
//! The main checkout's shared dependency folders are mounted inside it (`tree_share.rs`).

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::mounts;
use crate::evidence::tree_cache;
use crate::evidence::tree_mounter::{Mounter, plain};
use crate::evidence::tree_share;
use crate::evidence::tree_uppers::overlay_dir;
use crate::evidence::worktree_lock::worktree_lock;
use ganger_git::Oid;
use std::path::Path;

/// Makes the task's worktree at `path` on its new `branch` as an overlay on `base`'s cached
/// tree, with the main checkout's shared folders (`[trees] share`) mounted in it; the folders
/// shared. `None` when the cache is off, this process cannot mount, or the mount failed:
/// nothing was made.
pub(crate) fn take(
    ws: &Workspace,
    path: &Path,
    branch: &str,
    base: &Oid,
    mounter: Mounter,
) -> Result<Option<Vec<String>>> {
    if ws.config.trees.max == 0 {
        return Ok(None);
    }
    let dir = overlay_dir(ws, path);
    if !plain(path) || !plain(&dir) {
        return Ok(None);
    }
    let (upper, work) = (dir.join("upper"), dir.join("work"));
    // The base is named before the cache is held: an eviction after this keeps the tree.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&upper)
        .and_then(|()| std::fs::create_dir_all(&work))
        .and_then(|()| std::fs::write(dir.join("base"), base.as_bytes()))
        .and_then(|()| std::fs::write(dir.join("path"), path.as_os_str().as_encoded_bytes()))
        .and_then(|()| mounter.record(&dir))
        .map_err(|e| EngineError::io("create", &dir, e))?;
    let (mut held, _) = match tree_cache::hold(ws, base) {
        Ok(held) => held,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(error);
        }
    };
    // The cached tree is checked again while git registers the worktree (at once when it is
    // sealed read-only, else by its stamp): a tree someone modified is made again before
    // anything stands on it.
    let (made, unchanged) = std::thread::scope(|scope| {
        let checking = scope.spawn(|| held.unchanged());
        let made = worktree_lock(ws).and_then(|_serial| {
            ws.repo
                .add_worktree_without_files(path, branch, base)
                .map_err(|e| {
                    EngineError::environment(
                        format!("failed to create the worktree {}", path.display()),
                        e,
                    )
                })
        });
        (made, checking.join())
    });
    if let Err(error) = made {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(error);
    }
    if !matches!(unchanged, Ok(true)) {
        let stamp = held.stamp.clone();
        drop(held);
        let again = tree_cache::discard(ws, base, &stamp).and_then(|()| tree_cache::hold(ws, base));
        match again {
            Ok((fresh, _)) => held = fresh,
            Err(error) => {
                undo(ws, path, branch);
                return Err(error);
            }
        }
    }
    let finished = ganger_git::worktree_index(path)
        .map_err(|e| EngineError::environment(format!("failed to read {}", path.display()), e))
        .and_then(|index| {
            std::fs::copy(&held.index, &index).map_err(|e| EngineError::io("write", &index, e))
        })
        .and_then(|_| {
            let dot_git = path.join(".git");
            std::fs::copy(&dot_git, upper.join(".git"))
                .and_then(|_| std::fs::remove_file(&dot_git))
                .map_err(|e| EngineError::io("move", &dot_git, e))
        });
    drop(held);
    if let Err(error) = finished {
        undo(ws, path, branch);
        return Err(error);
    }
    if mount(ws, &dir, path).is_err() {
        // A kernel without overlayfs, or a file system it cannot stack on: a copy instead.
        undo(ws, path, branch);
        return Ok(None);
    }
    let lower = tree_cache::cache_dir(ws).join(base).join("tree");
    // Before the hook: a `post-checkout` that installs dependencies finds them shared.
    let shared = match tree_share::mount_at_start(ws, &dir, &lower, path) {
        Ok(shared) => shared,
        Err(error) => {
            undo(ws, path, branch);
            return Err(error);
        }
    };
    if let Err(e) = ws.repo.run_post_checkout(path, base) {
        undo(ws, path, branch);
        return Err(EngineError::environment(
            format!("failed to create the worktree {}", path.display()),
            e,
        ));
    }
    Ok(Some(shared))
}

/// Mounts the overlay kept in `dir` at `path`, by whoever mounted it first.
fn mount(ws: &Workspace, dir: &Path, path: &Path) -> Result<()> {
    let base = std::fs::read_to_string(dir.join("base"))
        .map_err(|e| EngineError::io("read", &dir.join("base"), e))?;
    let lower = tree_cache::cache_dir(ws).join(base.trim()).join("tree");
    std::fs::create_dir_all(path).map_err(|e| EngineError::io("create", path, e))?;
    Mounter::of(dir).mount(
        &lower,
        &dir.join("upper"),
        &dir.join("work"),
        path,
        &format!(
            "mount the overlay of {} at {}",
            lower.display(),
            path.display()
        ),
    )
}

/// Whether the overlay kept in `dir`, mounted at `path`, is a FUSE mount whose server is gone
/// (`ENOTCONN`). Asked with `statfs`, which the kernel always sends to the server: a `stat` of
/// the mount's root is answered from its cache for a while.
fn server_gone(dir: &Path, path: &Path) -> bool {
    Mounter::of(dir) == Mounter::Fuse
        && rustix::fs::statfs(path).is_err_and(|e| e == rustix::io::Errno::NOTCONN)
}

/// Whether the worktree at `path` is an overlay mounted by FUSE (`fuse-overlayfs`).
pub(crate) fn mounted_by_fuse(ws: &Workspace, path: &Path) -> bool {
    let dir = overlay_dir(ws, path);
    dir.join("base").is_file() && Mounter::of(&dir) == Mounter::Fuse
}

/// Whether something is mounted at `path` (from `/proc/self/mountinfo`).
pub(crate) fn mounted(path: &Path) -> bool {
    mounts::mounted_at(path)
}

/// Mounts the overlay of the worktree at `path` again if it is one and is not mounted (a
/// reboot unmounts it), and its shared folders; nothing for any other worktree.
pub(crate) fn ensure_mounted(ws: &Workspace, path: &Path) -> Result<()> {
    let dir = overlay_dir(ws, path);
    if !dir.join("base").is_file() {
        return Ok(());
    }
    if mounted(path) && server_gone(&dir, path) {
        // A FUSE mount whose server died (killed, out of memory) answers nothing: taken down
        // and made again, the task's change is still in its upper folder.
        Mounter::Fuse.unmount(
            path,
            &format!("unmount the dead overlay at {}", path.display()),
        )?;
    }
    if !mounted(path) {
        mount(ws, &dir, path)?;
    }
    tree_share::ensure_mounted(ws, &dir, path)
}

/// Unmounts the overlay at `path` and removes its upper folder and the empty worktree
/// directory below it. `false` when `path` is no overlay (nothing done).
pub(crate) fn remove(ws: &Workspace, path: &Path) -> Result<bool> {
    let dir = overlay_dir(ws, path);
    if !dir.is_dir() {
        return Ok(false);
    }
    if mounted(path) {
        tree_share::unmount_all(&dir, path)?;
        Mounter::of(&dir).unmount(path, &format!("unmount the overlay at {}", path.display()))?;
    }
    match std::fs::remove_dir(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(EngineError::io("remove", path, e));
        }
        _ => {}
    }
    std::fs::remove_dir_all(&dir).map_err(|e| EngineError::io("remove", &dir, e))?;
    let _ = ws.repo.prune_worktrees();
    Ok(true)
}

/// Removes a worktree this start registered, its overlay and its branch.
fn undo(ws: &Workspace, path: &Path, branch: &str) {
    let _ = remove(ws, path);
    if path.exists() {
        let _ = std::fs::remove_dir_all(path);
    }
    let _ = ws.repo.prune_worktrees();
    let _ = ws.repo.delete_branch(branch);
}
