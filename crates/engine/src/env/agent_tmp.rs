//! An agent's private temporary directory. An agent run as the user runs it (the local
//! sandbox) writes its temporary files where `TMPDIR` points, and some agents never remove
//! theirs: one leaves a 5.5 MB copy of a native library at every run, and a fleet of rounds
//! left gigabytes in `/tmp` (docs/agents/tmp-measured.md). So each round's agent, and each
//! warm agent, gets `TMPDIR` set to a directory of its own, `ganger-TOKEN` in ganger's
//! own temporary directory, removed when the round ends; a round whose host died has it
//! removed when the round is settled. A `TMPDIR` that `ganger.toml`'s `env` or the adapter's
//! plan sets is left as it is. The bubblewrap and Docker sandboxes give the agent a `/tmp` of
//! its own already.
//!
//! The process that makes the directory (a round's host, a warm host, `ganger attach`) holds
//! a lock on it (`flock`) for as long as it lives, and then marks it as held ([`HELD_MODE`]): a
//! host killed outright (SIGKILL) cannot remove its directory, but the kernel drops its lock,
//! so that whoever looks next ([`crate::env::agent_tmp_sweep`]: the reaper, `clean`, a `start`)
//! can tell a dead host's directory from a live one's, and remove it.

use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use ganger_agents::{Adapter, CommandPlan};
use rustix::fs::{FlockOperation, Mode, OFlags, flock};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// What every directory ganger makes for an agent is called, before the rest of its token.
pub(crate) const PREFIX: &str = "ganger-r";

/// The mode bit a directory's maker sets once it holds the directory's lock (the sticky bit,
/// which changes nothing in a directory only its owner may enter): a directory without it
/// (being made, or made by an older ganger) is never taken for a dead host's. A bit of the
/// mode the look reads anyway, rather than a file in it: one `fchmod` at the round's start,
/// no file to write there nor to remove at its end.
pub(crate) const HELD_MODE: u32 = 0o1000;

/// The variable the agent reads its temporary directory from.
pub(crate) const VAR: &str = "TMPDIR";

/// The private temporary directory of the agent of the round (or warm agent) `token`. Short:
/// agents make sockets in it (one skips a socket path over 103 bytes).
fn path_for(token: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ganger-{token}"))
}

/// Whether `path` is a directory of this user's, readable by no one else (not a link).
fn is_private(path: &Path) -> bool {
    private_mode(path).is_some()
}

/// The mode of `path` when it is a directory of this user's, readable by no one else (not a
/// link).
pub(crate) fn private_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let me = rustix::process::geteuid().as_raw();
    let meta = path.symlink_metadata().ok()?;
    let mode = meta.permissions().mode();
    (meta.is_dir() && meta.uid() == me && mode & 0o077 == 0).then_some(mode)
}

/// The directory at `path` opened for its lock (not a link; not inherited by the agent).
fn open_dir(path: &Path) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// The lock of the directory `dir`, when no live process holds it (then its maker is dead):
/// held until the descriptor is dropped.
pub(crate) fn take_if_free(dir: &Path) -> Option<OwnedFd> {
    let fd = open_dir(dir).ok()?;
    flock(&fd, FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(fd)
}

/// An agent's private temporary directory, removed with everything in it when dropped.
#[derive(Debug)]
pub(crate) struct AgentTmp {
    path: PathBuf,
    /// The directory's lock, held while this process lives: the directory is in use.
    lock: Option<OwnedFd>,
}

impl AgentTmp {
    /// Makes the directory of the round (or warm agent) `token`, readable by its owner only,
    /// and holds its lock. One of the same name that is not this user's private directory
    /// (made first by another user of a shared `/tmp`), or whose lock a live process holds,
    /// is refused, never used.
    pub(crate) fn make(token: &str) -> Result<AgentTmp> {
        AgentTmp::make_at(path_for(token))
    }

    /// [`AgentTmp::make`] at `path`.
    fn make_at(path: PathBuf) -> Result<AgentTmp> {
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_private(&path) => {}
            Err(e) => return Err(EngineError::io("create", &path, e)),
        }
        let lock = take_if_free(&path).ok_or_else(|| {
            EngineError::environment_message(format!(
                "{} is in use by another process",
                path.display()
            ))
        })?;
        rustix::fs::fchmod(&lock, Mode::from_raw_mode(0o700 | HELD_MODE))
            .map_err(|e| EngineError::io("mark", &path, std::io::Error::from(e)))?;
        Ok(AgentTmp {
            path,
            lock: Some(lock),
        })
    }

    /// A new directory for the agent of `adapter` run as the user runs it, unless
    /// `ganger.toml`'s `env` names its `TMPDIR`.
    pub(crate) fn unless_configured(
        adapter: &dyn Adapter,
        config: &Config,
        token: &str,
    ) -> Result<Option<AgentTmp>> {
        if config.agent(adapter.name()).env.contains_key(VAR) {
            return Ok(None);
        }
        AgentTmp::make(token).map(Some)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Points `env`'s `TMPDIR` here, unless the adapter's plan sets it (where a private
    /// directory of its own would not do).
    pub(crate) fn set_in(&self, env: &mut Vec<(OsString, OsString)>, plan: &CommandPlan) {
        if plan.env.iter().any(|(key, _)| key == VAR) {
            return;
        }
        env.retain(|(key, _)| key != VAR);
        env.push((VAR.into(), self.path.clone().into()));
    }

    /// Removes the directory on a thread of its own, so that the round's end (its snapshot
    /// and record) need not wait for it: removing a directory costs this machine's ext4 0.14
    /// to 0.22 ms, a sixth of what a round's end spent between the agent's exit and its
    /// snapshot (docs/benchmarks.md, "A round's end").
    pub(crate) fn remove_aside(mut self) -> Removing {
        // Taken, so that dropping `self` leaves the directory to the thread; its lock goes
        // once the directory has.
        let path = std::mem::take(&mut self.path);
        let lock = self.lock.take();
        let thread = std::thread::Builder::new()
            .name("agent-tmp".into())
            .spawn({
                let path = path.clone();
                move || {
                    let _ = std::fs::remove_dir_all(path);
                    drop(lock);
                }
            })
            .ok();
        Removing { thread, path }
    }
}

#[cfg(test)]
impl AgentTmp {
    /// A directory made at `path` (a test's own temporary directory).
    pub(crate) fn make_in_test(path: PathBuf) -> AgentTmp {
        AgentTmp::make_at(path).unwrap()
    }

    /// Lets the lock go and leaves the directory, as a host killed outright does.
    pub(crate) fn forget_as_killed(mut self) {
        self.lock = None;
        self.path = PathBuf::new();
    }
}

impl Drop for AgentTmp {
    fn drop(&mut self) {
        if self.path.as_os_str().is_empty() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// An agent's temporary directory being removed ([`AgentTmp::remove_aside`]): dropping it
/// waits for the removal, and removes the directory itself when no thread could be started.
#[derive(Debug)]
pub(crate) struct Removing {
    thread: Option<std::thread::JoinHandle<()>>,
    path: PathBuf,
}

impl Drop for Removing {
    fn drop(&mut self) {
        match self.thread.take() {
            Some(thread) => {
                let _ = thread.join();
            }
            None => {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }
}

/// Removes what the agent of the round `token` left in its temporary directory, when its
/// host died before removing it (a process that still holds the directory keeps it).
pub(crate) fn remove_left(token: &str) {
    let path = path_for(token);
    if is_private(&path)
        && let Some(lock) = take_if_free(&path)
    {
        let _ = std::fs::remove_dir_all(path);
        drop(lock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_private_and_goes_with_everything_in_it() {
        use std::os::unix::fs::PermissionsExt;
        let token = format!("test-{}", crate::base::tokens::new_token());
        let tmp = AgentTmp::make(&token).unwrap();
        let path = tmp.path().to_path_buf();
        assert_eq!(path, path_for(&token));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::create_dir(path.join("deep")).unwrap();
        std::fs::write(path.join("deep/.left-00000000.so"), b"left").unwrap();
        drop(tmp);
        assert!(!path.exists());
    }

    #[test]
    fn a_directory_removed_aside_is_gone_once_its_removal_is_dropped() {
        let token = format!("test-{}", crate::base::tokens::new_token());
        let tmp = AgentTmp::make(&token).unwrap();
        let path = tmp.path().to_path_buf();
        std::fs::create_dir(path.join("deep")).unwrap();
        std::fs::write(path.join("deep/left"), b"left").unwrap();
        let removing = tmp.remove_aside();
        drop(removing);
        assert!(!path.exists());
    }

    #[test]
    fn a_directory_of_its_name_that_others_can_read_is_refused_and_kept() {
        use std::os::unix::fs::PermissionsExt;
        let token = format!("test-{}", crate::base::tokens::new_token());
        let path = path_for(&token);
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = AgentTmp::make(&token).unwrap_err();
        assert!(
            error.message.contains(&path.display().to_string()),
            "{error:?}"
        );
        remove_left(&token);
        assert!(path.is_dir());
        std::fs::remove_dir(&path).unwrap();
    }

    #[test]
    fn what_a_dead_host_left_is_removed_by_its_token_and_nothing_else() {
        let token = format!("test-{}", crate::base::tokens::new_token());
        let left = AgentTmp::make(&token).unwrap();
        let path = left.path().to_path_buf();
        left.forget_as_killed();
        std::fs::write(path.join("x"), b"x").unwrap();
        let other = AgentTmp::make(&format!("{token}0")).unwrap();
        remove_left(&token);
        assert!(!path.exists());
        assert!(other.path().is_dir());
        // One its maker still holds stays.
        remove_left(&format!("{token}0"));
        assert!(other.path().is_dir());
    }
}
