//! Starting a detached round host: the same `ganger` binary in a new session, with no
//! terminal, its output in a log file, and the host lock handed over as file descriptor 3,
//! so that killing the command that started it, or its terminal, never touches the round.

use crate::error::SandboxError;
use crate::host_lock::HostLock;
use rustix::io::{FdFlags, fcntl_setfd};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The file descriptor a detached host finds its lock on.
const LOCK_FD: i32 = 3;
/// The environment variables that tell a detached host where its lock is.
const LOCK_FD_ENV: &str = "GANGER_HOST_LOCK_FD";
const LOCK_PATH_ENV: &str = "GANGER_HOST_LOCK_PATH";

/// A started detached host.
#[derive(Debug, Clone, Copy)]
pub struct DetachedHost {
    pub pid: u32,
}

/// Starts `program args` detached, holding `lock` as fd 3, reading `input` on its stdin (then
/// end of file) and writing its output to `log`.
pub fn spawn_detached_host(
    program: &Path,
    args: &[OsString],
    lock: &HostLock,
    input: &[u8],
    log: &Path,
) -> Result<DetachedHost, SandboxError> {
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| SandboxError::io(log, e))?;
    let err = out.try_clone().map_err(|e| SandboxError::io(log, e))?;
    let lock_fd = lock.file().as_raw_fd();
    let mut command = Command::new(program);
    command
        .args(args)
        .env(LOCK_FD_ENV, LOCK_FD.to_string())
        .env(LOCK_PATH_ENV, lock.path())
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(err);
    // SAFETY: only system calls between fork and exec (setsid, dup2, fcntl).
    let hook = move || {
        rustix::process::setsid().map_err(std::io::Error::from)?;
        // SAFETY: the lock fd is open in the parent until spawn returns.
        let source = unsafe { std::os::fd::BorrowedFd::borrow_raw(lock_fd) };
        if lock_fd == LOCK_FD {
            fcntl_setfd(source, FdFlags::empty()).map_err(std::io::Error::from)?;
        } else {
            // SAFETY: fd 3 is replaced in the child only; dup2 clears its close-on-exec.
            let mut target = unsafe { std::os::fd::OwnedFd::from_raw_fd(LOCK_FD) };
            let duplicated = rustix::io::dup2(source, &mut target);
            std::mem::forget(target);
            duplicated.map_err(std::io::Error::from)?;
        }
        Ok(())
    };
    // SAFETY: see the hook: it only makes async-signal-safe system calls.
    unsafe {
        command.pre_exec(hook);
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "the detached round host is started here, next to the agents"
    )]
    let mut child = command.spawn().map_err(|source| SandboxError::Spawn {
        program: program.to_path_buf(),
        source,
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.to_vec();
        // The host reads its input first thing; a thread keeps a large one from blocking us.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        })
        .join()
        .map_err(|_| {
            SandboxError::io(
                log,
                std::io::Error::other("writing the host's input failed"),
            )
        })?;
    }
    Ok(DetachedHost { pid: child.id() })
}

/// In a detached host: the lock handed over by the command that started it, if any.
pub fn take_inherited_lock() -> Option<HostLock> {
    let fd: i32 = std::env::var(LOCK_FD_ENV).ok()?.parse().ok()?;
    let path = PathBuf::from(std::env::var_os(LOCK_PATH_ENV)?);
    // SAFETY: the variable names a descriptor the parent opened for this process on purpose
    // and nothing else here owns it.
    let file = unsafe { File::from_raw_fd(fd) };
    // The agent must not inherit the lock, or the host would look alive after its death.
    fcntl_setfd(&file, FdFlags::CLOEXEC).ok()?;
    // SAFETY: removing variables before any other thread of this process reads them; the
    // host calls this first thing in `main`'s host path, single-threaded.
    unsafe {
        std::env::remove_var(LOCK_FD_ENV);
        std::env::remove_var(LOCK_PATH_ENV);
    }
    Some(HostLock::from_inherited(file, path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_lock::LockState;

    #[test]
    fn the_lock_lives_on_in_the_detached_child() {
        let dir = tempfile::tempdir().unwrap();
        let lock_path = dir.path().join("host.lock");
        let log = dir.path().join("host.log");
        let lock = HostLock::acquire(&lock_path).unwrap();
        // The child proves it holds fd 3 and got its input, then keeps the lock for a while.
        let host = spawn_detached_host(
            Path::new("/bin/sh"),
            &[
                "-c".into(),
                "ls -l /proc/self/fd/3 >/dev/null && cat; sleep 1".into(),
            ],
            &lock,
            b"ok\n",
            &log,
        )
        .unwrap();
        drop(lock);
        assert_eq!(HostLock::probe(&lock_path), LockState::Held);
        assert!(HostLock::wait_released(
            &lock_path,
            Some(std::time::Duration::from_secs(10))
        ));
        assert_eq!(HostLock::probe(&lock_path), LockState::Free);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "ok\n");
        assert!(host.pid > 0);
    }
}
