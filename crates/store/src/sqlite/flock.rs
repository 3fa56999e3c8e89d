//! The `flock` under SQLite's claims: an exclusive lock on a file of its own, held for as long
//! as the holder lives. The kernel drops the lock when its last holder exits, however it
//! exits, so a free lock means a dead holder: no pid check can be fooled by a zombie or a
//! reused pid. Waiters block on a shared lock and wake the moment the holder is gone. A
//! process started with the lock's open file (a detached host) holds the very same lock.

use rustix::fs::{FlockOperation, flock};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A held lock.
#[derive(Debug)]
pub(crate) struct FileLock {
    file: File,
    path: PathBuf,
}

/// What a look at a lock found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockState {
    /// A live holder has it.
    Held,
    /// The file is there and nobody holds it: the holder is gone.
    Free,
    /// There is no lock file (the holder finished and removed it, or never made it).
    Missing,
}

impl FileLock {
    /// Creates the lock file at `path` and takes the lock without waiting; an error of kind
    /// `WouldBlock` when a live holder has it.
    pub(crate) fn acquire(path: &Path) -> std::io::Result<FileLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        flock(&file, FlockOperation::NonBlockingLockExclusive)?;
        Ok(FileLock {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Wraps a lock this process inherited as an open file.
    pub(crate) fn inherited(file: File, path: PathBuf) -> FileLock {
        FileLock { file, path }
    }

    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the lock file, then lets the lock go (waiters wake).
    pub(crate) fn release(self) {
        let _ = std::fs::remove_file(&self.path);
        drop(self.file);
    }

    /// Looks at the lock at `path` without waiting.
    pub(crate) fn probe(path: &Path) -> LockState {
        let Ok(file) = File::open(path) else {
            return LockState::Missing;
        };
        match flock(&file, FlockOperation::NonBlockingLockShared) {
            Ok(()) => LockState::Free,
            Err(_) => LockState::Held,
        }
    }

    /// Blocks until the lock at `path` is free or missing.
    pub(crate) fn block_until_released(path: &Path) {
        if let Ok(file) = File::open(path) {
            let _ = flock(&file, FlockOperation::LockShared);
        }
    }

    /// Blocks until the lock at `path` is free or missing, at most `timeout` (`None`: no
    /// limit). True when it is free or missing.
    pub(crate) fn wait_released(path: &Path, timeout: Option<Duration>) -> bool {
        let Ok(file) = File::open(path) else {
            return true;
        };
        let (done, woke) = mpsc::channel();
        // A blocking flock cannot time out; a thread does the blocking and is abandoned when
        // the caller stops waiting.
        std::thread::spawn(move || {
            let _ = flock(&file, FlockOperation::LockShared);
            // Let the shared lock go before saying so: a waiter told the holder is gone may
            // take the lock itself at once.
            drop(file);
            let _ = done.send(());
        });
        match timeout {
            Some(limit) => woke.recv_timeout(limit).is_ok(),
            None => woke.recv().is_ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_left_by_a_dead_holder_is_free_and_a_released_one_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round.lock");
        let lock = FileLock::acquire(&path).unwrap();
        assert_eq!(FileLock::probe(&path), LockState::Held);
        assert_eq!(
            FileLock::acquire(&path).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock
        );
        // Dropping without release is what a dying holder does: the file stays, the lock goes.
        drop(lock);
        assert_eq!(FileLock::probe(&path), LockState::Free);
        FileLock::acquire(&path).unwrap().release();
        assert_eq!(FileLock::probe(&path), LockState::Missing);
    }
}
