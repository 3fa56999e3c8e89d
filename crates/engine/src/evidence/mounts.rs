//! Mounts as ganger's trees use them (docs/trees.md): what `/proc/self/mountinfo` says is
//! mounted where, and `mount`/`umount` run with their failure kept as an environment error
//! naming what was being done. The sealed cache (`tree_seal.rs`) and the overlays
//! (`tree_overlay.rs`) share them.

use crate::base::error::{EngineError, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

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
pub(crate) fn mounts_at(paths: &[PathBuf]) -> Vec<Option<bool>> {
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

/// Runs `command` (a `mount` or `umount`); its failure is an environment error saying it
/// failed to `what`, with the command's own words.
pub(crate) fn run(command: &mut Command, what: &str) -> Result<()> {
    let out = command
        .output()
        .map_err(|e| EngineError::environment(format!("failed to {what}"), e))?;
    if out.status.success() {
        return Ok(());
    }
    Err(EngineError::environment_message(format!(
        "failed to {what}: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// Unmounts `path`; still in use (by a process that is going: a round's last child), it is
/// detached now and gone with the last user (`umount -l`).
pub(crate) fn unmount(path: &Path, what: &str) -> Result<()> {
    if run(Command::new("umount").arg(path), what).is_ok() {
        return Ok(());
    }
    run(Command::new("umount").arg("-l").arg(path), what)
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
