//! Locks on files of `.ganger/run/`: the repository's worktree list (git reads every
//! worktree's record while it adds one, and a concurrent add's half-written record makes it
//! fail: one registration at a time), and the claims of the tree pool's filler.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use rustix::fs::FlockOperation;
use std::path::Path;

/// `path` opened (made when missing) and locked as `how` says; the lock lives as long as the
/// file. A non-blocking lock held elsewhere is `Ok(None)`.
pub(crate) fn lock_file(path: &Path, how: FlockOperation) -> Result<Option<std::fs::File>> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| EngineError::io("open", path, e))?;
    match rustix::fs::flock(&file, how) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) if how == FlockOperation::NonBlockingLockExclusive => {
            Ok(None)
        }
        Err(e) => Err(EngineError::io("lock", path, e.into())),
    }
}

/// An exclusive lock on the repository's worktree list, held while the guard lives.
pub(crate) fn worktree_lock(ws: &Workspace) -> Result<std::fs::File> {
    let dir = ws.state.run_dir();
    std::fs::create_dir_all(&dir).map_err(|e| EngineError::io("create", &dir, e))?;
    let path = dir.join("worktrees.lock");
    lock_file(&path, FlockOperation::LockExclusive)?
        .ok_or_else(|| EngineError::io("lock", &path, std::io::ErrorKind::WouldBlock.into()))
}
