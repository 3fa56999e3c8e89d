//! Removing the agents' private temporary directories ([`crate::env::agent_tmp`]) that their hosts
//! left when killed outright: a round's host or a warm host killed with SIGKILL removes
//! nothing, and an agent may unpack megabytes into its `TMPDIR` at every start
//! (docs/agents/tmp-measured.md). A directory is a dead
//! host's when it is this user's, marked as held, and its lock is free (the kernel dropped it
//! with the host); a live host's is never touched. The reaper, `clean` and `start` look: one
//! `lstat` per `ganger-r*` entry of the temporary directory, and for the ones marked the lock
//! tried.

use crate::env::agent_tmp::{HELD_MODE, PREFIX, private_mode, take_if_free};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The directories of dead hosts in ganger's temporary directory, removed (or, with
/// `dry_run`, that would be), in name order.
pub(crate) fn remove_dead_hosts(dry_run: bool) -> Vec<PathBuf> {
    remove_dead_hosts_in(&std::env::temp_dir(), dry_run)
}

/// [`remove_dead_hosts`] in the directory `tmp`.
fn remove_dead_hosts_in(tmp: &Path, dry_run: bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .as_encoded_bytes()
                .starts_with(PREFIX.as_bytes())
        })
        .map(|entry| entry.path())
        .filter(|dir| private_mode(dir).is_some_and(|mode| mode & HELD_MODE != 0))
        .filter_map(|dir| {
            // Held here until the directory is gone: no one takes it up meanwhile.
            let lock = take_if_free(&dir)?;
            if !dry_run {
                std::fs::remove_dir_all(&dir).ok()?;
            }
            drop(lock);
            Some(dir)
        })
        .collect();
    found.sort();
    found
}

/// How often a long-lived process (`ganger serve`, whose scheduler settles dead rounds at
/// every pass) looks again.
const EVERY: Duration = Duration::from_secs(30);

/// [`remove_dead_hosts`], at most once per [`EVERY`] in this process (the reaper's call).
pub(crate) fn now_and_then() {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    let Ok(mut last) = LAST.lock() else {
        return;
    };
    if last.is_some_and(|at| at.elapsed() < EVERY) {
        return;
    }
    *last = Some(Instant::now());
    drop(last);
    remove_dead_hosts(false);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::agent_tmp::AgentTmp;

    #[test]
    fn a_live_makers_directory_stays_and_a_dead_ones_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let named = |n: u32| tmp.path().join(format!("{PREFIX}{n}"));
        let live = AgentTmp::make_in_test(named(1));
        std::fs::write(named(1).join("in-use"), b"x").unwrap();
        // A dead host's: made and held, then its lock gone without its removal (a kill).
        let dead = AgentTmp::make_in_test(named(2));
        std::fs::write(named(2).join("left.so"), b"x").unwrap();
        dead.forget_as_killed();
        // Being made (not marked yet), or an older ganger's: left alone.
        use std::os::unix::fs::PermissionsExt;
        let private = |dir: &Path| {
            std::fs::create_dir(dir).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        };
        private(&named(3));
        // Another's name, marked.
        let other = tmp.path().join("ganger-test-1");
        private(&other);
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700 | HELD_MODE))
            .unwrap();

        assert_eq!(remove_dead_hosts_in(tmp.path(), true), [named(2)]);
        assert!(named(2).join("left.so").is_file(), "a dry run removed it");
        assert_eq!(remove_dead_hosts_in(tmp.path(), false), [named(2)]);
        assert!(!named(2).exists());
        assert!(
            named(1).join("in-use").is_file(),
            "a live maker's was removed"
        );
        assert!(named(3).is_dir() && other.is_dir());
        drop(live);
        assert!(!named(1).exists());
        assert_eq!(
            remove_dead_hosts_in(tmp.path(), false),
            Vec::<PathBuf>::new()
        );
    }
}
