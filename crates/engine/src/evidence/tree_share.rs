//! The main checkout's dependency folders in an overlay task's tree (`[trees] share`,
//! docs/trees.md): each folder named there that the main checkout has and git ignores is
//! mounted inside the task's overlay as an overlay of its own, the main checkout's folder
//! below (read-only: overlayfs never writes a lower layer) and the task's own upper folder
//! above. The task starts with the main checkout's `node_modules`, `target` or `.venv` and
//! writes its own copy of only what it changes; the main checkout's folder is never written.
//!
//! ```text
//! .ganger/trees/upper/NAME/shares          the folders mounted, a line each
//! .ganger/trees/upper/NAME/share/H/upper/  what the task changed in one (H: a hash of its path)
//! .ganger/trees/upper/NAME/share/H/work/   overlayfs's own work folder
//! ```
//!
//! The mount point is an empty directory in the task's upper folder; being ignored, nothing
//! under it is ever part of the task's change, its snapshots or its diff. An overlay mounted
//! by FUSE (without root) gets none: `fusermount3` cannot mount inside it.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::mounts;
use crate::evidence::tree_mounter::{Mounter, plain};
use std::path::{Path, PathBuf};

/// The file that lists the folders shared into the overlay kept in `dir`.
fn record(dir: &Path) -> PathBuf {
    dir.join("shares")
}

/// The folders shared into the overlay kept in `dir`, in the order they were mounted.
pub(crate) fn recorded(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(record(dir))
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The folder of `folder`'s own layer in the overlay kept in `dir`.
fn layer_dir(dir: &Path, folder: &str) -> PathBuf {
    // FNV-1a: stable across builds, unlike the standard hasher.
    let hash = folder.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    dir.join("share").join(format!("{hash:016x}"))
}

fn write_record(dir: &Path, folders: &[String]) -> Result<()> {
    let mut text = folders.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    std::fs::write(record(dir), text).map_err(|e| EngineError::io("write", &record(dir), e))
}

/// Whether each component of `folder` below `root` is a real directory (no symbolic link:
/// the mount must land inside the tree) and the last one is absent (`last_absent`) or a
/// directory.
fn inside(root: &Path, folder: &str, last_absent: bool) -> bool {
    let parts: Vec<&str> = folder.split('/').collect();
    let mut at = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let meta = std::fs::symlink_metadata(&at);
        if i + 1 == parts.len() && last_absent {
            return meta.is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        }
        if !meta.is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}

/// Mounts the shared folders of `[trees] share` into the new overlay task at `worktree` (its
/// overlay kept in `dir`, standing on `lower`, the cached tree), and records them. A folder
/// is left out when the main checkout has none, the base tracks something there or lacks
/// its parent, git does not ignore it in the task's tree, or its mount fails; the folders
/// shared are returned.
pub(crate) fn mount_at_start(
    ws: &Workspace,
    dir: &Path,
    lower: &Path,
    worktree: &Path,
) -> Result<Vec<String>> {
    // `fusermount3` runs as root, which a user's FUSE mount keeps out: it cannot mount a
    // folder inside a FUSE overlay (a task's overlay without root).
    if Mounter::of(dir) == Mounter::Fuse {
        return Ok(Vec::new());
    }
    let mut candidates = Vec::new();
    for folder in ws.config.trees.shared_folders() {
        let source = ws.repo.main.join(folder);
        // A path overlayfs's options cannot carry (a `,` or `:` in the main checkout's) is
        // left out like a folder the main checkout lacks. Its layer is under the overlay's
        // own folder, which the overlay checked.
        if plain(&source) && source.is_dir() && inside(lower, folder, true) {
            let point = worktree.join(folder);
            if std::fs::create_dir(&point).is_ok() {
                candidates.push(folder.to_owned());
            }
        }
    }
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let ignored = ignored_of(worktree, &candidates)?;
    let (planned, tracked): (Vec<String>, Vec<String>) = candidates
        .into_iter()
        .partition(|folder| ignored.contains(folder));
    for folder in tracked {
        let _ = std::fs::remove_dir(worktree.join(folder));
    }
    // Recorded before anything is mounted: whatever undoes the start finds every mount.
    write_record(dir, &planned)?;
    let mut shared = Vec::new();
    for folder in planned {
        if mount(ws, dir, &folder, worktree).is_err() {
            let _ = std::fs::remove_dir(worktree.join(&folder));
            let _ = std::fs::remove_dir_all(layer_dir(dir, &folder));
            continue;
        }
        shared.push(folder);
    }
    write_record(dir, &shared)?;
    Ok(shared)
}

/// Which of `folders` git ignores in the tree at `worktree` (its own ignore files, as the
/// base has them).
fn ignored_of(worktree: &Path, folders: &[String]) -> Result<Vec<String>> {
    let mut args = vec!["check-ignore", "--"];
    args.extend(folders.iter().map(String::as_str));
    let (code, out) = ganger_git::Git::new(worktree).run_code(args).map_err(|e| {
        EngineError::environment(
            format!(
                "failed to ask git what it ignores in {}",
                worktree.display()
            ),
            e,
        )
    })?;
    if code > 1 {
        return Err(EngineError::environment(
            format!(
                "failed to ask git what it ignores in {}",
                worktree.display()
            ),
            std::io::Error::other(format!("git check-ignore exited with {code}")),
        ));
    }
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(|line| line.trim_end_matches('/').to_owned())
        .collect())
}

/// Mounts the shared folder `folder` at its place in `worktree`.
fn mount(ws: &Workspace, dir: &Path, folder: &str, worktree: &Path) -> Result<()> {
    let source = ws.repo.main.join(folder);
    let layer = layer_dir(dir, folder);
    let (upper, work) = (layer.join("upper"), layer.join("work"));
    std::fs::create_dir_all(&upper)
        .and_then(|()| std::fs::create_dir_all(&work))
        .map_err(|e| EngineError::io("create", &upper, e))?;
    let point = worktree.join(folder);
    Mounter::of(dir).mount(
        &source,
        &upper,
        &work,
        &point,
        &format!(
            "mount the shared {} at {}",
            source.display(),
            point.display()
        ),
    )
}

/// Mounts again each recorded shared folder of the overlay kept in `dir` that is not mounted
/// (a reboot unmounted them), once the overlay itself is: one whose place in the tree is no
/// longer a plain directory, or that the main checkout no longer has, stays out.
pub(crate) fn ensure_mounted(ws: &Workspace, dir: &Path, worktree: &Path) -> Result<()> {
    for folder in recorded(dir) {
        let point = worktree.join(&folder);
        if mounts::mounted_at(&point)
            || !inside(worktree, &folder, false)
            || !ws.repo.main.join(&folder).is_dir()
        {
            continue;
        }
        mount(ws, dir, &folder, worktree)?;
    }
    Ok(())
}

/// Unmounts the shared folders of the overlay kept in `dir`, the last mounted first.
pub(crate) fn unmount_all(dir: &Path, worktree: &Path) -> Result<()> {
    for folder in recorded(dir).iter().rev() {
        let point = worktree.join(folder);
        if mounts::mounted_at(&point) {
            Mounter::of(dir).unmount(
                &point,
                &format!("unmount the shared folder at {}", point.display()),
            )?;
        }
    }
    Ok(())
}
