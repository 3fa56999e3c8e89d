//! An overlay task's change, read from its upper folder (docs/trees.md): every path where
//! the merged view can differ from the base is there (a written file, a whiteout for a
//! deletion, an opaque directory where the base's was replaced), so a snapshot or a status
//! of the task asks git about those paths only instead of every file of the tree.
//!
//! The upper folder says where the files differ from the cached tree; the worktree's index
//! may differ from it too (an agent's `git add`, `commit`, `rm --cached`), so the paths whose
//! index entry is not the cached index's are taken as well. Everywhere else the merged view
//! is the cached tree, which is the cached index, which is then the worktree's index: exactly
//! what a snapshot of listed paths (`Scope::Paths`) takes as given.

use crate::env::workspace::Workspace;
use crate::evidence::tree_cache;
use crate::evidence::tree_mounter::Mounter;
use crate::evidence::tree_uppers::overlay_dir;
use ganger_git::{IndexEntry, Repo, Scope, Snapshot, WorktreeStatus};
use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// More changed paths than this and git's own full look is as cheap (as for the watch).
const MOST_PATHS: usize = 20_000;

/// The paths (relative, `/`-separated) where the overlay task's worktree at `worktree` may
/// differ from its index, nothing else differing. `None` when it is no mounted overlay, or
/// its change cannot be told this way (a changed `.gitattributes`, a name that is not UTF-8,
/// an index this crate does not read, too many paths): git then looks at everything.
pub(crate) fn changed_paths(ws: &Workspace, worktree: &Path) -> Option<BTreeSet<String>> {
    change(ws, worktree).map(|(_, paths)| paths)
}

/// The base the overlay at `worktree` stands on, and [`changed_paths`].
fn change(ws: &Workspace, worktree: &Path) -> Option<(String, BTreeSet<String>)> {
    let dir = overlay_dir(ws, worktree);
    let base = std::fs::read_to_string(dir.join("base")).ok()?;
    if !crate::evidence::tree_overlay::mounted(worktree) {
        return None;
    }
    let mut paths = BTreeSet::new();
    list_upper(&dir.join("upper"), "", &mut paths)?;
    // fuse-overlayfs marks an opaque directory with files of its own (`whole` takes such a
    // directory as one path, so none is listed), and may write a deletion as a `.wh.NAME`
    // file where it cannot make a `0/0` device: NAME is the path.
    if Mounter::of(&dir) == Mounter::Fuse {
        paths = paths.into_iter().map(|path| fuse_whiteout(&path)).collect();
    }
    // Attributes decide how git reads every file, the base's ones too.
    if paths
        .iter()
        .any(|p| p.rsplit('/').next() == Some(".gitattributes"))
    {
        return None;
    }
    let base = base.trim().to_owned();
    let cached = tree_cache::cache_dir(ws).join(&base).join("index");
    let index = ganger_git::worktree_index(worktree).ok()?;
    index_differences(&index, &cached, &mut paths)?;
    (paths.len() <= MOST_PATHS).then_some((base, paths))
}

/// Adds the paths under `dir` of the upper folder (`prefix`: its path in the worktree, with a
/// trailing `/` unless the root): each file, link and whiteout; a directory whose base
/// contents are gone (opaque), that stands for another (redirected) or that holds a
/// repository is one path, which git looks through whole. The worktree's `.git` file is not
/// a change. `None` on a name that is not UTF-8 or too many paths.
fn list_upper(dir: &Path, prefix: &str, paths: &mut BTreeSet<String>) -> Option<()> {
    let entries = std::fs::read_dir(dir).ok()?;
    for entry in entries {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let name = std::str::from_utf8(name.as_bytes()).ok()?;
        if prefix.is_empty() && name == ".git" {
            continue;
        }
        let path = format!("{prefix}{name}");
        let full = entry.path();
        let meta = std::fs::symlink_metadata(&full).ok()?;
        if meta.is_dir() && !whole(&full) {
            list_upper(&full, &format!("{path}/"), paths)?;
        } else {
            // A file, a link, a whiteout (a 0/0 character device: a deletion), a directory
            // taken whole: git looks at the path in the merged view.
            paths.insert(path);
        }
        if paths.len() > MOST_PATHS {
            return None;
        }
    }
    Some(())
}

/// The path a FUSE upper folder's entry stands for: `a/.wh.b` is a deletion of `a/b`.
fn fuse_whiteout(path: &str) -> String {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    match name.strip_prefix(".wh.") {
        Some(deleted) if !deleted.is_empty() && !deleted.starts_with(".wh.") => {
            if dir.is_empty() {
                deleted.to_owned()
            } else {
                format!("{dir}/{deleted}")
            }
        }
        _ => path.to_owned(),
    }
}

/// Whether a directory of the upper folder is taken as one path: opaque (its base contents
/// are gone: deleted and made again), redirected (a renamed directory whose files are still
/// the base's, elsewhere), or a repository.
fn whole(dir: &Path) -> bool {
    let attribute = |name: &str| {
        let mut value = [0u8; 8];
        rustix::fs::lgetxattr(dir, name, &mut value[..]).ok()
    };
    attribute("trusted.overlay.opaque").is_some()
        || attribute("user.overlay.opaque").is_some()
        || attribute("trusted.overlay.redirect").is_some()
        || attribute("user.overlay.redirect").is_some()
        || attribute("user.fuseoverlayfs.opaque").is_some()
        || std::fs::symlink_metadata(dir.join(".wh..wh..opq")).is_ok()
        || std::fs::symlink_metadata(dir.join(".git")).is_ok()
}

/// Adds the paths whose entry in the worktree's `index` differs from the cached index's (its
/// mode or object, or only one has it). `None` when either cannot be read.
fn index_differences(index: &Path, cached: &Path, paths: &mut BTreeSet<String>) -> Option<()> {
    let (now, base) = (std::fs::read(index).ok()?, std::fs::read(cached).ok()?);
    if now == base {
        return Some(());
    }
    let now = ganger_git::read_index(index).ok()?;
    let base = ganger_git::read_index(cached).ok()?;
    let mut differ = |entry: &IndexEntry| -> Option<()> {
        paths.insert(String::from_utf8(entry.path.clone()).ok()?);
        Some(())
    };
    let (mut i, mut j) = (0, 0);
    while i < now.len() || j < base.len() {
        match (now.get(i), base.get(j)) {
            (Some(a), Some(b)) if a.path == b.path => {
                if a.mode != b.mode || a.oid != b.oid {
                    differ(a)?;
                }
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.path < b.path => {
                differ(a)?;
                i += 1;
            }
            (Some(_), Some(b)) | (None, Some(b)) => {
                differ(b)?;
                j += 1;
            }
            (Some(a), None) => {
                differ(a)?;
                i += 1;
            }
            (None, None) => break,
        }
    }
    Some(())
}

/// A snapshot of the task's worktree `worktree`, opened from the task's path `path` (see
/// [`Repo::snapshot`]): of an overlay, git looks at its changed paths only.
pub(crate) fn snapshot(
    ws: &Workspace,
    path: &Path,
    worktree: &Repo,
    ref_name: Option<&str>,
    message: &str,
) -> Result<Snapshot, ganger_git::GitError> {
    match changed_paths(ws, path) {
        Some(paths) => worktree.snapshot_of(
            ref_name,
            message,
            Scope::Paths {
                paths: &paths,
                index: None,
            },
        ),
        None => worktree.snapshot(ref_name, message),
    }
}

/// What `git status` shows for the task's worktree `worktree`, opened from the task's path
/// `path`: of an overlay, git looks at its changed paths only (and those its branch changed
/// since the base, which an index the same as the base's shows as staged).
pub(crate) fn status(
    ws: &Workspace,
    path: &Path,
    worktree: &Repo,
) -> Result<WorktreeStatus, ganger_git::GitError> {
    let Some((base, mut paths)) = change(ws, path) else {
        return worktree.status();
    };
    if let Some(head) = worktree.head()?
        && head != base
    {
        let names = ganger_git::Git::new(&worktree.worktree).run([
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            &base,
            &head,
        ])?;
        for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            match std::str::from_utf8(name) {
                Ok(name) => paths.insert(name.to_owned()),
                Err(_) => return worktree.status(),
            };
        }
    }
    worktree.status_of(&paths)
}

#[cfg(test)]
mod tests {
    use super::fuse_whiteout;

    #[test]
    fn a_fuse_whiteout_file_is_the_deleted_path() {
        assert_eq!(fuse_whiteout("src/.wh.b.txt"), "src/b.txt");
        assert_eq!(fuse_whiteout(".wh.top"), "top");
        assert_eq!(fuse_whiteout("src/a.txt"), "src/a.txt");
        assert_eq!(fuse_whiteout("src/.wh..wh..opq"), "src/.wh..wh..opq");
        assert_eq!(fuse_whiteout("src/.wh."), "src/.wh.");
    }
}
