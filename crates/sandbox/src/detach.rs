//! Starting a detached round host: the same `ganger` binary in a new session, with no
//! terminal, its output in a log file, and an open file it must inherit at a given descriptor
//! (the store's claim on the round, handed over so that killing the command that started it,
//! or its terminal, never touches the round, and the round has a holder at every moment).
//! A host can also be started owned ([`spawn_owned_host`]): the same, but it is sent SIGTERM
//! when the thread that started it ends (`ganger serve`'s warm hosts end with serve).

use crate::error::SandboxError;
use rustix::io::{FdFlags, fcntl_setfd};
use std::ffi::OsString;
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Variables a host never inherits: the store's password in libpq's variable, and the
/// note that a password comes on stdin (set again by the caller when one does). A host is
/// handed the password on its stdin, where no other user and no agent can read it.
pub const WITHHELD_ENV: [&str; 2] = ["PGPASSWORD", "GANGER_STORE_PASSWORD"];

/// A started detached host.
#[derive(Debug, Clone, Copy)]
pub struct DetachedHost {
    pub pid: u32,
}

/// Starts `program args` detached with `env` added to its environment, holding `inherit`'s
/// file at its descriptor number, reading `input` on its stdin (then end of file) and writing
/// its output to `log`.
pub fn spawn_detached_host(
    program: &Path,
    args: &[OsString],
    inherit: Option<(BorrowedFd<'_>, RawFd)>,
    env: &[(OsString, OsString)],
    input: &[u8],
    log: &Path,
) -> Result<DetachedHost, SandboxError> {
    spawn_host(program, args, inherit, env, input, log, Kind::Detached)
}

/// Starts a detached round host as [`spawn_detached_host`] does, with the stop signals
/// (SIGINT, SIGTERM, SIGHUP) blocked: one sent before the host watches them (a cancel in its
/// first milliseconds) waits, pending, instead of killing it, and reaches its watch once the
/// host calls [`unblock_stop_signals`].
pub fn spawn_round_host(
    program: &Path,
    args: &[OsString],
    inherit: Option<(BorrowedFd<'_>, RawFd)>,
    env: &[(OsString, OsString)],
    input: &[u8],
    log: &Path,
) -> Result<DetachedHost, SandboxError> {
    spawn_host(program, args, inherit, env, input, log, Kind::RoundHost)
}

/// The signals a round host is started with blocked.
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn stop_signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset adds valid signal numbers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in STOP_SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// Unblocks the stop signals a round host was started with blocked ([`spawn_round_host`]):
/// called once the host watches them, so that a pending one is delivered to the watch now,
/// and before the host starts anything (a child inherits the signal mask).
pub fn unblock_stop_signals() {
    let set = stop_signal_set();
    // SAFETY: a valid set, and no old set asked for.
    unsafe {
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Starts `program args` as [`spawn_detached_host`] does, but owned by the calling thread:
/// the host is sent SIGTERM when that thread ends (the process exits, even killed with
/// SIGKILL), and never outlives it; `env` is its whole environment (the one of whoever asked
/// for it, not the owner's). The caller reaps it.
pub fn spawn_owned_host(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    input: &[u8],
    log: &Path,
) -> Result<DetachedHost, SandboxError> {
    spawn_host(program, args, None, env, input, log, Kind::Owned)
}

/// How a host is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Detached,
    /// Detached, its stop signals blocked until it watches them.
    RoundHost,
    /// Sent SIGTERM when the starting thread ends.
    Owned,
}

fn spawn_host(
    program: &Path,
    args: &[OsString],
    inherit: Option<(BorrowedFd<'_>, RawFd)>,
    env: &[(OsString, OsString)],
    input: &[u8],
    log: &Path,
    kind: Kind,
) -> Result<DetachedHost, SandboxError> {
    let owned = kind == Kind::Owned;
    let stops = (kind == Kind::RoundHost).then(stop_signal_set);
    let out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| SandboxError::io(log, e))?;
    let err = out.try_clone().map_err(|e| SandboxError::io(log, e))?;
    let inherit = inherit.map(|(file, at)| (file.as_raw_fd(), at));
    let mut command = Command::new(program);
    if owned {
        command.env_clear();
    }
    for withheld in WITHHELD_ENV {
        command.env_remove(withheld);
    }
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(err);
    let parent = rustix::process::getpid();
    // SAFETY: only system calls between fork and exec (setsid, prctl, getppid, dup2, fcntl,
    // sigprocmask).
    let hook = move || {
        rustix::process::setsid().map_err(std::io::Error::from)?;
        // After std's own reset of the mask (which runs before this hook): kept through exec.
        if let Some(set) = &stops {
            // SAFETY: a valid set, and no old set asked for.
            if unsafe { libc::sigprocmask(libc::SIG_BLOCK, set, std::ptr::null_mut()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if owned {
            // SAFETY: prctl with an integer argument.
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The owner may have died before the signal was armed.
            if rustix::process::getppid() != Some(parent) {
                return Err(std::io::Error::other("its owner is gone"));
            }
        }
        let Some((fd, at)) = inherit else {
            return Ok(());
        };
        // SAFETY: the inherited file is open in the parent until spawn returns.
        let source = unsafe { BorrowedFd::borrow_raw(fd) };
        if fd == at {
            fcntl_setfd(source, FdFlags::empty()).map_err(std::io::Error::from)?;
        } else {
            // SAFETY: `at` is replaced in the child only; dup2 clears its close-on-exec.
            let mut target = unsafe { std::os::fd::OwnedFd::from_raw_fd(at) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{FlockOperation, flock};
    use std::os::fd::AsFd;

    fn is_locked(path: &Path) -> bool {
        let file = std::fs::File::open(path).unwrap();
        flock(&file, FlockOperation::NonBlockingLockShared).is_err()
    }

    #[test]
    fn the_inherited_file_and_its_lock_live_on_in_the_detached_child() {
        let dir = tempfile::tempdir().unwrap();
        let lock_path = dir.path().join("host.lock");
        let log = dir.path().join("host.log");
        let lock = std::fs::File::create(&lock_path).unwrap();
        flock(&lock, FlockOperation::NonBlockingLockExclusive).unwrap();
        // The child proves it holds fd 5, has its variable and got its input, then keeps the
        // lock for a while.
        let host = spawn_detached_host(
            Path::new("/bin/sh"),
            &[
                "-c".into(),
                "ls -l /proc/self/fd/5 >/dev/null && echo \"$HANDED\" && cat; sleep 1".into(),
            ],
            Some((lock.as_fd(), 5)),
            &[("HANDED".into(), "over".into())],
            b"ok\n",
            &log,
        )
        .unwrap();
        drop(lock);
        assert!(is_locked(&lock_path), "the child holds the lock");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while is_locked(&lock_path) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!is_locked(&lock_path), "the lock went with the child");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "over\nok\n");
        assert!(host.pid > 0);
    }

    /// The blocked signals of the process whose `/proc/PID/status` is `status`, as a mask.
    fn blocked(status: &str) -> u64 {
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .unwrap();
        u64::from_str_radix(line.trim(), 16).unwrap()
    }

    #[test]
    fn a_round_host_starts_with_its_stop_signals_blocked_and_a_detached_one_without() {
        let dir = tempfile::tempdir().unwrap();
        let bit = |signal: libc::c_int| 1u64 << (signal - 1);
        let stops = bit(libc::SIGINT) | bit(libc::SIGTERM) | bit(libc::SIGHUP);
        for (round_host, want) in [(true, stops), (false, 0)] {
            let log = dir.path().join(format!("{round_host}.log"));
            let spawn = if round_host {
                spawn_round_host
            } else {
                spawn_detached_host
            };
            let host = spawn(
                Path::new("/bin/cat"),
                &["/proc/self/status".into()],
                None,
                &[],
                b"",
                &log,
            )
            .unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !std::fs::read_to_string(&log).is_ok_and(|t| t.contains("SigBlk"))
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let status = std::fs::read_to_string(&log).unwrap();
            assert_eq!(blocked(&status) & stops, want, "pid {}: {status}", host.pid);
        }
    }

    #[test]
    fn an_owned_host_is_sent_sigterm_when_the_thread_that_started_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("host.log");
        let started = {
            let log = log.clone();
            std::thread::spawn(move || {
                spawn_owned_host(
                    Path::new("/bin/sh"),
                    &[
                        "-c".into(),
                        "trap 'echo TERM; exit 0' TERM; echo up; while :; do sleep 0.05; done"
                            .into(),
                    ],
                    &[],
                    b"",
                    &log,
                )
                .unwrap()
            })
            .join()
            .unwrap()
        };
        let pid = rustix::process::Pid::from_raw(i32::try_from(started.pid).unwrap()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let status = loop {
            match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG) {
                Ok(Some((_, status))) => break status,
                _ if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => panic!("the owned host outlived its thread: {other:?}"),
            }
        };
        // SIGTERM may come before the shell set its trap.
        let trapped = status.exit_status() == Some(0)
            && std::fs::read_to_string(&log).unwrap().contains("TERM");
        let killed = status.terminating_signal() == Some(libc::SIGTERM);
        assert!(trapped || killed, "{status:?}");
    }
}
