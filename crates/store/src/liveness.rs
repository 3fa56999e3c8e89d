//! Liveness: whether the process doing a piece of work (a round's host, a `start` before its
//! task is recorded, a `clean`, a fix loop, a person attached to a task) is still alive, asked
//! of the store so that every process, on this machine or another, gets the same answer.
//!
//! A process claims the work under a name (a round's token, `clean-TOKEN`, `loop-SLUG`) and
//! holds the [`Claim`] for as long as it works; the store records the claim's [`ClaimKey`]
//! with the work (a round, a start, a clean). Anyone can then ask whether the claim is alive,
//! or wait for it to end. A claim ends in one of two ways: `release`, when the work is over
//! (waiters wake at once), or by being dropped, which is what a dying holder does.
//!
//! SQLite keeps a `flock` on a file per claim: the kernel drops it with its last holder, so a
//! free lock is a dead holder however it died. A networked backend keeps a lease instead: the
//! claim renews it while held (a heartbeat) and carries the lease's fencing number; a lease
//! not renewed in time is dead. Either way a claim can be handed to a process this one starts
//! (a detached round host), so that the work has a live holder at every moment: named on its
//! command line ([`HandedClaim`]), with the lock's open file inherited where there is one.

use crate::error::StoreError;
use std::ffi::{OsStr, OsString};
use std::os::fd::{BorrowedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::time::Duration;

/// How a backend finds a claim again: recorded with the work it keeps alive, and opaque above
/// the backend (SQLite: the path of the claim's lock file).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ClaimKey(String);

impl ClaimKey {
    /// A key as the backend records it.
    pub fn new(key: impl Into<String>) -> ClaimKey {
        ClaimKey(key.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ClaimKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a process started to carry a claim on (a detached round host) must be given.
#[derive(Debug)]
pub struct Handover<'a> {
    /// An open file the new process must inherit, at this descriptor number.
    pub inherit: Option<(BorrowedFd<'a>, RawFd)>,
    /// The claim, for the new process's command line ([`HandedClaim::to_arg`]), read back by
    /// [`Liveness::inherited_claim`].
    pub claim: HandedClaim,
}

/// A claim as a process started to carry it is told of it, on its command line: nothing in
/// it is a secret (a lease's name and fence; a lock's descriptor and path). Not `Clone`: a
/// process takes the claim it was handed once.
#[derive(Debug, PartialEq, Eq)]
pub enum HandedClaim {
    /// A lease (PostgreSQL): its name, and the fence it is held with.
    Lease { name: String, fence: i64 },
    /// A lock (SQLite) held on an inherited descriptor, and the lock file's path.
    Lock { fd: RawFd, path: PathBuf },
}

impl HandedClaim {
    /// The claim as one argument: `lease:FENCE:NAME` or `lock:FD:PATH`.
    pub fn to_arg(&self) -> OsString {
        match self {
            HandedClaim::Lease { name, fence } => format!("lease:{fence}:{name}").into(),
            HandedClaim::Lock { fd, path } => {
                let mut arg = format!("lock:{fd}:").into_bytes();
                arg.extend_from_slice(path.as_os_str().as_bytes());
                OsString::from_vec(arg)
            }
        }
    }

    /// The refusal of a claim handed to a store of another kind (`store`) than made it.
    pub(crate) fn foreign(&self, store: &str) -> StoreError {
        let kind = match self {
            HandedClaim::Lease { .. } => "a lease",
            HandedClaim::Lock { .. } => "a lock",
        };
        StoreError::Io {
            path: "--claim".into(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the claim handed over is {kind}, which a {store} store does not hold"),
            ),
        }
    }

    /// Reads back what [`HandedClaim::to_arg`] wrote.
    pub fn from_arg(arg: &OsStr) -> Result<HandedClaim, String> {
        let bad = || "not a handed claim (lease:FENCE:NAME or lock:FD:PATH)".to_owned();
        let mut parts = arg.as_bytes().splitn(3, |b| *b == b':');
        let (Some(kind), Some(number), Some(rest)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let number = std::str::from_utf8(number).map_err(|_| bad())?;
        match kind {
            b"lease" => Ok(HandedClaim::Lease {
                name: String::from_utf8(rest.to_vec()).map_err(|_| bad())?,
                fence: number.parse().map_err(|_| bad())?,
            }),
            b"lock" if !rest.is_empty() => Ok(HandedClaim::Lock {
                fd: number.parse().map_err(|_| bad())?,
                path: PathBuf::from(OsStr::from_bytes(rest)),
            }),
            _ => Err(bad()),
        }
    }
}

/// How a backend keeps a claim alive while it is held. Dropping it lets the claim go as a
/// dying holder would.
pub trait ClaimHold: Send + std::fmt::Debug {
    /// What a process started to carry the claim on must be given.
    fn handover(&self) -> Handover<'_>;

    /// Ends the claim: the work is over, and whoever waits for it wakes.
    fn release(self: Box<Self>);

    /// Whether the claim was lost while held: a lease that ran out before it was renewed (a
    /// partition, a paused process) and that others may have found dead. The work it names is
    /// no longer this holder's: the backend refuses its writes of it. A lock held by the
    /// kernel is never lost.
    fn lost(&self) -> bool {
        false
    }
}

/// A held claim: the work it names is alive while this (or a process it was handed to)
/// holds it. It does not borrow the connection it was made on.
#[derive(Debug)]
pub struct Claim {
    key: ClaimKey,
    hold: Box<dyn ClaimHold>,
}

impl Claim {
    /// A claim a backend made, recorded under `key`.
    pub fn new(key: ClaimKey, hold: Box<dyn ClaimHold>) -> Claim {
        Claim { key, hold }
    }

    /// The key to record with the work.
    pub fn key(&self) -> &ClaimKey {
        &self.key
    }

    /// What a process started to carry this claim on must be given (then this one can be
    /// dropped: the claim lives on in that process).
    pub fn handover(&self) -> Handover<'_> {
        self.hold.handover()
    }

    /// Ends the claim: the work is over, and whoever waits for it wakes.
    pub fn release(self) {
        self.hold.release();
    }

    /// Whether the claim was lost while held ([`ClaimHold::lost`]): the holder should stop
    /// the work, whose records it can no longer write.
    pub fn lost(&self) -> bool {
        self.hold.lost()
    }
}

/// The store's side of liveness.
pub trait Liveness {
    /// Claims the work named `name` for this process; [`StoreError::ClaimHeld`] while a live
    /// holder has it. Names are the caller's: a round's token, `clean-TOKEN`, `loop-SLUG`.
    fn claim(&self, name: &str) -> Result<Claim, StoreError>;

    /// The key a claim of `name` is recorded under (for work found by name, not by a record).
    fn claim_key(&self, name: &str) -> ClaimKey;

    /// The claim the process that started this one handed over ([`Claim::handover`]), as its
    /// command line named it. Taken first thing by a detached host.
    fn inherited_claim(&self, handed: HandedClaim) -> Result<Claim, StoreError>;

    /// Whether a holder of the claim lives. A claim never made, released or dropped is dead.
    fn is_alive(&self, key: &ClaimKey) -> Result<bool, StoreError>;

    /// Waits until the claim is dead, at most `timeout` (`None`: no limit); true when it is.
    /// A release wakes the waiter at once.
    fn wait_for_end(&self, key: &ClaimKey, timeout: Option<Duration>) -> Result<bool, StoreError>;

    /// Calls `then`, on a thread of the backend's, once the claim is dead (at once if it is);
    /// an error when the backend cannot watch it now, and the caller finds the end by asking.
    fn when_ended(&self, key: &ClaimKey, then: Box<dyn FnOnce() + Send>) -> Result<(), StoreError>;

    /// Forgets what a dead claim left behind (SQLite: its lock file), once its work is settled.
    fn forget_claim(&self, key: &ClaimKey);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handed_claim_reads_back_from_its_argument() {
        for handed in [
            HandedClaim::Lease {
                name: "tok:with:colons".into(),
                fence: 42,
            },
            HandedClaim::Lock {
                fd: 3,
                path: PathBuf::from(OsStr::from_bytes(b"/run/a:b/\xff.lock")),
            },
        ] {
            assert_eq!(HandedClaim::from_arg(&handed.to_arg()), Ok(handed));
        }
        for bad in [
            "",
            "lease",
            "lease:x:name",
            "lock:3:",
            "flock:3:/p",
            "lock:three:/p",
        ] {
            assert!(HandedClaim::from_arg(OsStr::new(bad)).is_err(), "{bad}");
        }
    }
}
