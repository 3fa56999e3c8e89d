//! A pool of worktrees made ahead of time per base commit (`[trees] pool = N`, docs/trees.md):
//! a start takes a ready one (a rename into the task's place, its git record rewritten, a new
//! branch where it stands: milliseconds, whatever the size of the tree) instead of checking
//! one out, and a filler in the background checks out another. The worktree a task gets is a
//! real git worktree, as `git worktree add` makes it.
//!
//! ```text
//! .ganger/trees/ready/BASE/ganger-pool-...   ready worktrees, detached at BASE
//! .ganger/trees/filling/ganger-pool-...      being checked out by the filler
//! .ganger/trees/fill.log                     what the background filler printed
//! .ganger/run/trees-fill.lock                the filler's claim (one at a time)
//! .ganger/run/trees-fill.again               a start asked the running filler to look again
//! ```
//!
//! A ready tree is published by renaming it out of `filling/`, and taken by renaming it to the
//! task's path (refusing to replace anything): of two starts racing for one tree, one rename
//! finds it gone and the start takes the next. The pool follows the base tasks start from: a
//! filler for one base removes the ready trees of any other.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::evidence::worktree_lock::{lock_file, worktree_lock};
use ganger_git::{Oid, Repo};
use rustix::fs::FlockOperation;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use std::path::{Path, PathBuf};

/// The first part of every pooled worktree's directory name (and so of its git record's).
const PREFIX: &str = "ganger-pool-";

fn trees_dir(ws: &Workspace) -> PathBuf {
    ws.state.root().join("trees")
}

fn ready_dir(ws: &Workspace, base: &Oid) -> PathBuf {
    trees_dir(ws).join("ready").join(base)
}

fn filling_dir(ws: &Workspace) -> PathBuf {
    trees_dir(ws).join("filling")
}

/// The entries of `dir` that are pooled worktrees, sorted by name.
fn pooled_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Whether the worktree at `path` was made for the pool (its git record's name says so), so
/// that a start killed after taking it, before putting it on its branch, is settled as one
/// that made it.
pub(crate) fn is_pooled(path: &Path) -> bool {
    Repo::worktree_record_name(path).is_some_and(|name| name.starts_with(PREFIX))
}

/// Takes a ready worktree of `base` for a new task: moves it to `path` and puts it on the
/// task's new `branch` (checked by the caller). `false` when none could be taken (the pool is
/// empty, or `path` is on another file system), and nothing was changed.
pub(crate) fn take(ws: &Workspace, path: &Path, branch: &str, base: &Oid) -> Result<bool> {
    if ws.config.trees.pool == 0 {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| EngineError::io("create", parent, e))?;
    }
    for tree in pooled_in(&ready_dir(ws, base)) {
        match renameat_with(CWD, &tree, CWD, path, RenameFlags::NOREPLACE) {
            Ok(()) => {}
            // Taken by another start meanwhile: the next one.
            Err(rustix::io::Errno::NOENT) => continue,
            Err(_) => return Ok(false),
        }
        crate::base::faults::pause("pool-taken");
        let placed = ws
            .repo
            .repair_moved_worktree(path)
            .and_then(|()| ws.repo.unlock_worktree(path))
            .and_then(|()| ws.repo.attach_new_branch(path, branch, base));
        return match placed {
            Ok(()) => Ok(true),
            Err(error) => {
                let _ = ws.repo.remove_locked_worktree(path);
                Err(EngineError::environment(
                    format!(
                        "failed to give the pooled worktree {} to the task",
                        path.display()
                    ),
                    error,
                ))
            }
        };
    }
    Ok(false)
}

/// What a fill did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Filled {
    /// Worktrees checked out for the pool.
    pub made: usize,
    /// Pooled worktrees removed: of another base, or left half made by a killed filler.
    pub removed: usize,
    /// Whether another filler was at work (it was asked to look again instead).
    pub busy: bool,
}

/// Fills the pool for `base` up to `[trees] pool`, one checkout at a time, removing the ready
/// worktrees of other bases and what a killed filler left. One filler at a time: when one is
/// at work it is asked to look again, and this returns at once.
pub fn fill(ws: &Workspace, base: &Oid) -> Result<Filled> {
    let run = ws.state.run_dir();
    std::fs::create_dir_all(&run).map_err(|e| EngineError::io("create", &run, e))?;
    let again = run.join("trees-fill.again");
    let mut filled = Filled::default();
    loop {
        let lock = run.join("trees-fill.lock");
        let Some(claim) = lock_file(&lock, FlockOperation::NonBlockingLockExclusive)? else {
            std::fs::write(&again, b"").map_err(|e| EngineError::io("write", &again, e))?;
            filled.busy = true;
            return Ok(filled);
        };
        let _ = std::fs::remove_file(&again);
        filled.removed += remove_others(ws, Some(base))?;
        while pooled_in(&ready_dir(ws, base)).len() < ws.config.trees.pool {
            make_one(ws, base)?;
            filled.made += 1;
        }
        drop(claim);
        // A start that took a tree while the claim was held asked for another look.
        if !again.exists() {
            return Ok(filled);
        }
    }
}

/// Removes every pooled worktree (`ganger trees drain`); returns how many.
pub fn drain(ws: &Workspace) -> Result<usize> {
    let run = ws.state.run_dir();
    std::fs::create_dir_all(&run).map_err(|e| EngineError::io("create", &run, e))?;
    let lock = run.join("trees-fill.lock");
    let _claim = lock_file(&lock, FlockOperation::LockExclusive)?;
    remove_others(ws, None)
}

/// The ready worktrees, by base commit.
pub fn ready(ws: &Workspace) -> Vec<(Oid, usize)> {
    let Ok(bases) = std::fs::read_dir(trees_dir(ws).join("ready")) else {
        return Vec::new();
    };
    let mut found: Vec<(Oid, usize)> = bases
        .flatten()
        .map(|base| {
            let name = base.file_name().to_string_lossy().into_owned();
            (name, pooled_in(&base.path()).len())
        })
        .filter(|(_, count)| *count > 0)
        .collect();
    found.sort();
    found
}

/// Checks out one worktree for `base` and publishes it as ready. Only its registration holds
/// the repository's worktree lock; the checkout runs beside other starts.
fn make_one(ws: &Workspace, base: &Oid) -> Result<()> {
    let filling = filling_dir(ws);
    std::fs::create_dir_all(&filling).map_err(|e| EngineError::io("create", &filling, e))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("{PREFIX}{}-{stamp:x}", &base[..base.len().min(12)]);
    let path = filling.join(&name);
    let environment = |what: &str, e| {
        EngineError::environment(format!("failed to {what} the pooled worktree {name}"), e)
    };
    {
        let _serial = worktree_lock(ws)?;
        ws.repo
            .add_worktree_unchecked(&path, base)
            .map_err(|e| environment("register", e))?;
    }
    if let Err(e) = ws.repo.check_out_files(&path, base) {
        let _ = ws.repo.remove_locked_worktree(&path);
        return Err(environment("check out", e));
    }
    let ready = ready_dir(ws, base);
    std::fs::create_dir_all(&ready).map_err(|e| EngineError::io("create", &ready, e))?;
    let published = ready.join(&name);
    std::fs::rename(&path, &published).map_err(|e| EngineError::io("rename", &path, e))?;
    ws.repo
        .repair_moved_worktree(&published)
        .map_err(|e| environment("record", e))
}

/// Removes the pooled worktrees of every base but `keep`, and whatever a killed filler left
/// half made (the caller holds the filler's claim); returns how many.
fn remove_others(ws: &Workspace, keep: Option<&Oid>) -> Result<usize> {
    let mut doomed = pooled_in(&filling_dir(ws));
    if let Ok(bases) = std::fs::read_dir(trees_dir(ws).join("ready")) {
        for base in bases.flatten() {
            if keep.is_none_or(|keep| base.file_name().to_string_lossy() != keep.as_str()) {
                doomed.extend(pooled_in(&base.path()));
                let _ = std::fs::remove_dir(base.path());
            }
        }
    }
    for tree in &doomed {
        if ws.repo.remove_locked_worktree(tree).is_err() && tree.exists() {
            std::fs::remove_dir_all(tree).map_err(|e| EngineError::io("remove", tree, e))?;
        }
    }
    // Pooled worktrees whose directory went some other way (`.ganger` removed by hand) keep a
    // locked record that `git worktree prune` would never drop.
    let vanished = vanished_records(ws);
    for tree in &vanished {
        let _ = ws.repo.unlock_worktree(tree);
    }
    if !doomed.is_empty() || !vanished.is_empty() {
        let _ = ws.repo.prune_worktrees();
    }
    Ok(doomed.len() + vanished.len())
}

/// The paths git's records of pooled worktrees name where nothing is any more.
fn vanished_records(ws: &Workspace) -> Vec<PathBuf> {
    let Ok(records) = std::fs::read_dir(ws.repo.common_dir.join("worktrees")) else {
        return Vec::new();
    };
    records
        .flatten()
        .filter(|r| r.file_name().to_string_lossy().starts_with(PREFIX))
        .filter_map(|r| std::fs::read_to_string(r.path().join("gitdir")).ok())
        .filter_map(|gitdir| Path::new(gitdir.trim_end()).parent().map(Path::to_path_buf))
        .filter(|tree| !tree.exists())
        .collect()
}

/// Starts a filler for `base` in the background (`ganger trees fill --base BASE`, detached,
/// its output in `.ganger/trees/fill.log`), when the pool is on. A filler that cannot start
/// leaves the pool as it is: later starts check out their own worktrees.
pub(crate) fn refill_in_background(ws: &Workspace, base: &Oid) {
    if ws.config.trees.pool == 0 {
        return;
    }
    let Ok(program) = std::env::current_exe() else {
        return;
    };
    let log = trees_dir(ws).join("fill.log");
    if std::fs::create_dir_all(trees_dir(ws)).is_err() {
        return;
    }
    let args: Vec<std::ffi::OsString> = vec![
        "-C".into(),
        ws.repo.main.clone().into_os_string(),
        "trees".into(),
        "fill".into(),
        "--base".into(),
        base.into(),
    ];
    let _ = ganger_sandbox::spawn_detached_host(&program, &args, None, &[], b"", &log);
}
