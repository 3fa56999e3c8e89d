//! A cached tree sealed read-only (docs/trees.md): as root, a made tree's `tree/` and `index`
//! are each bind-mounted read-only onto themselves. While those mounts stand, nothing writes
//! the tree through its path (`EROFS`, for root too), so an overlay start trusts it after one
//! look at `/proc/self/mountinfo` instead of reading its stamp again (a walk of every entry).
//! Without them (after a reboot, a tree made by an older ganger, not root) the stamp is read
//! as before, and a tree found good is sealed then. Whatever removes or moves a cached tree
//! unseals it first; an overlay already standing on it keeps its own hold of the lower layer.

use crate::base::error::{EngineError, Result};
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

/// A mount point as `/proc/self/mountinfo` writes it (octal escapes for space, tab, newline
/// and backslash), read back.
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let octal = bytes
            .get(at + 1..at + 4)
            .filter(|d| bytes[at] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
                at += 4;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// For each of `paths`: whether something is mounted there, and if so whether the topmost
/// mount there is read-only.
fn mounts_at(paths: &[PathBuf]) -> Vec<Option<bool>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut found = vec![None; paths.len()];
    for line in text.lines() {
        let mut fields = line.split(' ').skip(4);
        let (Some(point), Some(options)) = (fields.next(), fields.next()) else {
            continue;
        };
        let point = unescape(point);
        if let Some(at) = paths.iter().position(|p| *p == point) {
            // Later lines are mounts on top of earlier ones.
            found[at] = Some(options.split(',').any(|o| o == "ro"));
        }
    }
    found
}

/// Whether something is mounted at `path` (the overlay's look at its own mount).
pub(crate) fn mounted_at(path: &Path) -> bool {
    mounts_at(&[path.to_path_buf()])
        .first()
        .is_some_and(Option::is_some)
}

/// Whether the entry's tree and index are both sealed: the topmost mount at each is a
/// read-only one.
pub(crate) fn sealed(entry: &Path) -> bool {
    mounts_at(&parts(entry)).iter().all(|m| *m == Some(true))
}

/// Seals the entry's tree and index (bind-mounted read-only onto themselves). A failure leaves
/// them unsealed: the next start reads the stamp.
pub(crate) fn seal(entry: &Path) -> Result<()> {
    let sealing = parts(entry).iter().try_for_each(|part| {
        run(
            Command::new("mount").arg("--bind").arg(part).arg(part),
            part,
        )?;
        run(
            Command::new("mount")
                .args(["-o", "remount,bind,ro"])
                .arg(part)
                .arg(part),
            part,
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
        let found = mounts_at(&parts);
        let mut any = false;
        for (part, mount) in parts.iter().zip(found) {
            if mount.is_some() {
                any = true;
                if run(Command::new("umount").arg(part), part).is_err() {
                    run(Command::new("umount").arg("-l").arg(part), part)?;
                }
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

fn run(command: &mut Command, part: &Path) -> Result<()> {
    let out = command
        .output()
        .map_err(|e| EngineError::io("run mount for", part, e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(EngineError::environment_message(format!(
        "failed to (un)mount the cached tree's {}: {}",
        part.display(),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

#[cfg(test)]
mod tests {
    use super::unescape;
    use std::path::Path;

    #[test]
    fn a_mount_point_with_a_space_and_a_backslash_is_read_back() {
        assert_eq!(unescape("/a\\040b\\134c"), Path::new("/a b\\c"));
        assert_eq!(unescape("/plain\\x"), Path::new("/plain\\x"));
    }
}
