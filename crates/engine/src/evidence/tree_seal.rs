//! A cached tree sealed read-only (docs/trees.md): as root, a made tree's `tree/` and `index`
//! are each bind-mounted read-only onto themselves. While those mounts stand, nothing writes
//! the tree through its path (`EROFS`, for root too), so an overlay start trusts it after one
//! look at `/proc/self/mountinfo` instead of reading its stamp again (a walk of every entry).
//! Without them (after a reboot, a tree made by an older ganger, not root) the stamp is read
//! as before, and a tree found good is sealed then. Whatever removes or moves a cached tree
//! unseals it first; an overlay already standing on it keeps its own hold of the lower layer.

use crate::base::error::{EngineError, Result};
use crate::evidence::mounts;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether this process may seal a tree (mount needs root).
pub(crate) fn can_seal() -> bool {
    rustix::process::geteuid().is_root()
}

/// What is sealed of a cache entry: its files and their index.
fn parts(entry: &Path) -> [PathBuf; 2] {
    [entry.join("tree"), entry.join("index")]
}

/// Whether the entry's tree and index are both sealed: the topmost mount at each is a
/// read-only one.
pub(crate) fn sealed(entry: &Path) -> bool {
    mounts::mounts_at(&parts(entry))
        .iter()
        .all(|m| *m == Some(true))
}

/// Seals the entry's tree and index (bind-mounted read-only onto themselves). A failure leaves
/// them unsealed: the next start reads the stamp.
pub(crate) fn seal(entry: &Path) -> Result<()> {
    let sealing = parts(entry).iter().try_for_each(|part| {
        let what = || format!("seal the cached tree's {}", part.display());
        mounts::run(
            Command::new("mount").arg("--bind").arg(part).arg(part),
            &what(),
        )?;
        mounts::run(
            Command::new("mount")
                .args(["-o", "remount,bind,ro"])
                .arg(part)
                .arg(part),
            &what(),
        )
    });
    if sealing.is_err() {
        let _ = unseal(entry);
    }
    sealing
}

/// Takes every mount off the entry's tree and index (sealed twice by two starts at once, it
/// has two), so that it can be removed or moved.
pub(crate) fn unseal(entry: &Path) -> Result<()> {
    let parts = parts(entry);
    // A few more than two starts could stack, and never a loop without end.
    for _ in 0..16 {
        let found = mounts::mounts_at(&parts);
        let mut any = false;
        for (part, mount) in parts.iter().zip(found) {
            if mount.is_some() {
                any = true;
                mounts::unmount(
                    part,
                    &format!("unseal the cached tree's {}", part.display()),
                )?;
            }
        }
        if !any {
            return Ok(());
        }
    }
    Err(EngineError::environment_message(format!(
        "failed to unmount the read-only mounts of the cached tree {}",
        entry.display()
    )))
}
