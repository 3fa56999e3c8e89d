//! SQLite's liveness: a claim is an exclusive `flock` on `run/NAME.lock` beside the database,
//! recorded under the file's path. A free lock (or none) is a dead holder; waiters block on a
//! shared lock and wake the moment it goes. A claim is handed to a detached host as its lock's
//! open file at descriptor 3, named (with the lock's path) on the host's command line.

use super::SqliteStore;
use super::flock::{FileLock, LockState};
use crate::error::StoreError;
use crate::liveness::{Claim, ClaimHold, ClaimKey, HandedClaim, Handover, Liveness};
use rustix::io::{FdFlags, fcntl_setfd};
use std::fs::File;
use std::os::fd::{AsFd, FromRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The descriptor a detached host finds its lock on.
const HANDOVER_FD: RawFd = 3;
/// How many more times a claim is tried when its lock is taken (10 ms apart).
const CLAIM_TRIES: u32 = 5;

/// A claim held as a lock.
#[derive(Debug)]
struct LockHold(FileLock);

impl ClaimHold for LockHold {
    fn handover(&self) -> Handover<'_> {
        Handover {
            inherit: Some((self.0.file().as_fd(), HANDOVER_FD)),
            claim: HandedClaim::Lock {
                fd: HANDOVER_FD,
                path: self.0.path().to_owned(),
            },
        }
    }

    fn release(self: Box<Self>) {
        self.0.release();
    }
}

fn key_of(path: &Path) -> ClaimKey {
    ClaimKey::new(super::path_text(path))
}

impl SqliteStore {
    fn lock_file(&self, name: &str) -> Result<PathBuf, StoreError> {
        let path = self.state.lock_file(name);
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(StoreError::Io {
                path,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a claim's name is one file name",
                ),
            });
        }
        Ok(path)
    }
}

impl Liveness for SqliteStore {
    fn claim(&self, name: &str) -> Result<Claim, StoreError> {
        let path = self.lock_file(name)?;
        let dir = self.state.run_dir();
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io { path: dir, source })?;
        // A shared lock is also what a look at the claim takes, for an instant: a claim
        // refused only by such a look is tried again a few times before it counts as held.
        let mut tries = 0;
        loop {
            match FileLock::acquire(&path) {
                Ok(lock) => return Ok(Claim::new(key_of(&path), Box::new(LockHold(lock)))),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && tries < CLAIM_TRIES => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Err(StoreError::ClaimHeld {
                        name: name.to_owned(),
                    });
                }
                Err(source) => return Err(StoreError::Io { path, source }),
            }
        }
    }

    fn claim_key(&self, name: &str) -> ClaimKey {
        key_of(&self.state.lock_file(name))
    }

    fn inherited_claim(&self, handed: HandedClaim) -> Result<Claim, StoreError> {
        let HandedClaim::Lock { fd, path } = handed else {
            return Err(handed.foreign("SQLite"));
        };
        // SAFETY: the command line names a descriptor the parent opened for this process on
        // purpose (`handover`), and nothing else here owns it.
        let file = unsafe { File::from_raw_fd(fd) };
        // What this process starts (the agent) must not inherit the lock, or the round would
        // look alive after the host's death.
        fcntl_setfd(&file, FdFlags::CLOEXEC).map_err(|e| StoreError::Io {
            path: path.clone(),
            source: e.into(),
        })?;
        let key = key_of(&path);
        Ok(Claim::new(
            key,
            Box::new(LockHold(FileLock::inherited(file, path))),
        ))
    }

    fn is_alive(&self, key: &ClaimKey) -> Result<bool, StoreError> {
        Ok(FileLock::probe(Path::new(key.as_str())) == LockState::Held)
    }

    fn wait_for_end(&self, key: &ClaimKey, timeout: Option<Duration>) -> Result<bool, StoreError> {
        Ok(FileLock::wait_released(Path::new(key.as_str()), timeout))
    }

    fn when_ended(&self, key: &ClaimKey, then: Box<dyn FnOnce() + Send>) -> Result<(), StoreError> {
        let path = PathBuf::from(key.as_str());
        let watched = path.clone();
        // A thread per watched claim, blocked in the kernel: a small stack is plenty.
        std::thread::Builder::new()
            .name("claim-watch".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                FileLock::block_until_released(&watched);
                then();
            })
            .map(drop)
            .map_err(|source| StoreError::Io { path, source })
    }

    fn forget_claim(&self, key: &ClaimKey) {
        let path = Path::new(key.as_str());
        if FileLock::probe(path) != LockState::Held {
            let _ = std::fs::remove_file(path);
        }
    }
}
