//! The host lock: a round's host holds an exclusive `flock` on a file of its own for as long
//! as it lives. The kernel drops the lock when the host dies, however it dies, so a free lock
//! means a dead host: no pid check can be fooled by a zombie or a reused pid. Waiters block on
//! a shared lock and wake the moment the host is gone. A detached host inherits the lock from
//! the command that started it (the same open file), so there is no moment without a holder.

use crate::error::SandboxError;
use rustix::fs::{FlockOperation, flock};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// A held host lock.
#[derive(Debug)]
pub struct HostLock {
    file: File,
    path: PathBuf,
}

/// What a look at a host lock found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockState {
    /// A live host holds it.
    Held,
    /// The file is there and nobody holds it: the host is gone.
    Free,
    /// There is no lock file (the host finished and removed it, or never made it).
    Missing,
}

impl HostLock {
    /// Creates the lock file at `path` and takes the lock.
    pub fn acquire(path: &Path) -> Result<HostLock, SandboxError> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| SandboxError::io(path, e))?;
        flock(&file, FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| SandboxError::io(path, e.into()))?;
        Ok(HostLock {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Wraps a lock this process inherited as an open file.
    pub(crate) fn from_inherited(file: File, path: PathBuf) -> HostLock {
        HostLock { file, path }
    }

    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the lock file, then lets the lock go (waiters wake).
    pub fn release(self) {
        let _ = std::fs::remove_file(&self.path);
        drop(self.file);
    }

    /// Looks at the lock at `path` without waiting.
    pub fn probe(path: &Path) -> LockState {
        let Ok(file) = File::open(path) else {
            return LockState::Missing;
        };
        match flock(&file, FlockOperation::NonBlockingLockShared) {
            Ok(()) => LockState::Free,
            Err(_) => LockState::Held,
        }
    }

    /// Blocks until the lock at `path` is free or missing, at most `timeout` (`None`: no
    /// limit). True when it is free or missing.
    pub fn wait_released(path: &Path, timeout: Option<Duration>) -> bool {
        let Ok(file) = File::open(path) else {
            return true;
        };
        let (done, woke) = mpsc::channel();
        // A blocking flock cannot time out; a thread does the blocking and is abandoned when
        // the caller stops waiting.
        std::thread::spawn(move || {
            let _ = flock(&file, FlockOperation::LockShared);
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
    use std::time::Instant;

    #[test]
    fn a_held_lock_is_seen_held_and_its_release_wakes_a_waiter_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round.lock");
        let lock = HostLock::acquire(&path).unwrap();
        assert_eq!(HostLock::probe(&path), LockState::Held);
        assert!(!HostLock::wait_released(
            &path,
            Some(Duration::from_millis(50))
        ));
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                assert!(HostLock::wait_released(
                    &path,
                    Some(Duration::from_secs(10))
                ));
                Instant::now()
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        let released = Instant::now();
        lock.release();
        let woke = waiter.join().unwrap();
        // The waiter woke after the release, not before, and not at its time limit.
        assert!(woke >= released);
        assert!(woke - released < Duration::from_secs(5));
        assert_eq!(HostLock::probe(&path), LockState::Missing);
    }

    #[test]
    fn a_lock_left_by_a_dead_holder_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round.lock");
        let lock = HostLock::acquire(&path).unwrap();
        // Dropping without release is what a dying host does: the file stays, the lock goes.
        drop(lock);
        assert_eq!(HostLock::probe(&path), LockState::Free);
    }
}
