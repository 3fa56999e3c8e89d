//! The local sandbox: the agent runs as the user would run it by hand, in the worktree, but
//! as the leader of its own session and process group, with an explicit environment, its
//! stdin fed from ganger (or /dev/null), its stdout and stderr piped to the round host, a
//! parent-death signal so that it dies with its host, the round marker in its environment and,
//! where possible, a cgroup of its own that it is created in (see `raw_spawn.rs`).

use crate::ROUND_ENV;
use crate::cgroup::Cgroup;
use crate::error::SandboxError;
use crate::members::{RoundMarker, kill_round};
use crate::proc_stat::{ProcessId, proc_stat};
use crate::raw_spawn::{self, Prepared};
use rustix::process::{Pid, Signal, kill_process_group};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What to run for a round.
#[derive(Debug, Clone)]
pub struct AgentCommand {
    /// The program, as a path or a name looked up in the `PATH` of `env`.
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The agent's whole environment; nothing else is inherited. The round marker is added.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory (the worktree).
    pub cwd: PathBuf,
    /// Bytes written to the agent's stdin, which is then closed; `None` for /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// The round's token (the value of `GANGER_ROUND`).
    pub token: String,
    /// Whether to try to give the round a cgroup of its own.
    pub use_cgroup: bool,
}

/// How the agent's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentExit {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

/// What [`RunningAgent::wait_timeout`] saw first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// The agent exited.
    Exited(AgentExit),
    /// The other descriptor became readable.
    Woken,
    /// Neither, within the time limit.
    TimedOut,
}

/// A started agent.
#[derive(Debug)]
pub struct RunningAgent {
    /// The agent process, named for good.
    pub process: ProcessId,
    /// How to find every process of the round.
    pub marker: RoundMarker,
    /// A pidfd of the agent, to wait for its exit with a time limit.
    pidfd: Option<OwnedFd>,
    stdout: Option<File>,
    stderr: Option<File>,
    /// How it ended, once reaped: its pid may then name another process.
    exit: Option<AgentExit>,
    /// Whether the round's processes were stopped (`stop`, `stop_leftovers`); if not, drop
    /// stops them.
    settled: AtomicBool,
}

/// `program` as given when it is a path, else found on the `PATH` of `env` (like `execvp`).
fn locate(program: &Path, env: &[(OsString, OsString)]) -> PathBuf {
    if program.components().count() > 1 {
        return program.to_path_buf();
    }
    let path = env
        .iter()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.clone())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| program.to_path_buf())
}

/// Starts `command` in the local sandbox.
pub fn spawn_local(command: &AgentCommand) -> Result<RunningAgent, SandboxError> {
    spawn(command, false).map(|(agent, _)| agent)
}

/// Starts `command` in the local sandbox with its stdin a pipe ganger keeps writing to (an
/// agent spoken to over a protocol); `command.stdin` is not used.
pub fn spawn_local_conversing(
    command: &AgentCommand,
) -> Result<(RunningAgent, File), SandboxError> {
    let (agent, stdin) = spawn(command, true)?;
    let stdin = stdin.ok_or_else(|| SandboxError::Spawn {
        program: command.program.clone(),
        source: std::io::Error::other("no pipe to the agent's stdin"),
    })?;
    Ok((agent, stdin))
}

fn spawn(
    command: &AgentCommand,
    conversing: bool,
) -> Result<(RunningAgent, Option<File>), SandboxError> {
    let spawn_error = |source: std::io::Error| SandboxError::Spawn {
        program: command.program.clone(),
        source,
    };
    let program = locate(&command.program, &command.env);
    let env = command
        .env
        .iter()
        .filter(|(key, _)| key != ROUND_ENV)
        .map(|(key, value)| (key.as_os_str(), value.as_os_str()))
        .chain(std::iter::once((
            OsStr::new(ROUND_ENV),
            OsStr::new(&command.token),
        )));
    let prepared = Prepared::new(
        &program,
        command.args.iter().map(OsString::as_os_str),
        env,
        &command.cwd,
    )
    .map_err(spawn_error)?;
    let mut cgroup = if command.use_cgroup {
        Cgroup::create(&command.token)
    } else {
        None
    };
    let directory = match &cgroup {
        Some(cgroup) => Some(OwnedFd::from(
            File::open(cgroup.path()).map_err(|e| SandboxError::io(cgroup.path(), e))?,
        )),
        None => None,
    };
    let with_stdin = conversing || command.stdin.is_some();
    let child = match raw_spawn::spawn(&prepared, directory.as_ref(), with_stdin) {
        Ok(child) => child,
        // A kernel without clone3 or CLONE_INTO_CGROUP (before 5.7), or a cgroup we may not
        // use: start without it;
        // the session id and the round marker still find every process.
        Err(e)
            if directory.is_some()
                && matches!(
                    e.raw_os_error(),
                    Some(
                        libc::ENOSYS
                            | libc::EINVAL
                            | libc::E2BIG
                            | libc::EPERM
                            | libc::EACCES
                            | libc::EBUSY
                            | libc::EOPNOTSUPP
                    )
                ) =>
        {
            if let Some(cgroup) = cgroup.take() {
                cgroup.remove();
            }
            raw_spawn::spawn(&prepared, None, with_stdin).map_err(spawn_error)?
        }
        Err(e) => {
            if let Some(cgroup) = &cgroup {
                cgroup.remove();
            }
            return Err(spawn_error(e));
        }
    };
    let start_ticks = proc_stat(child.pid).map_or(0, |stat| stat.start_ticks);
    let mut kept_stdin = None;
    match (child.stdin, command.stdin.clone()) {
        (Some(stdin), _) if conversing => kept_stdin = Some(stdin),
        (Some(mut stdin), Some(bytes)) => {
            // A large prompt may not fit the pipe before the agent reads: write from a thread.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        _ => {}
    }
    let agent = RunningAgent {
        process: ProcessId {
            pid: child.pid,
            start_ticks,
        },
        marker: RoundMarker {
            token: command.token.clone(),
            session: Some(child.pid),
            cgroup,
        },
        pidfd: child.pidfd,
        stdout: Some(child.stdout),
        stderr: Some(child.stderr),
        exit: None,
        settled: AtomicBool::new(false),
    };
    Ok((agent, kept_stdin))
}

fn decode(status: libc::c_int) -> AgentExit {
    if libc::WIFEXITED(status) {
        AgentExit {
            code: Some(libc::WEXITSTATUS(status)),
            signal: None,
        }
    } else if libc::WIFSIGNALED(status) {
        AgentExit {
            code: None,
            signal: Some(libc::WTERMSIG(status)),
        }
    } else {
        AgentExit {
            code: None,
            signal: None,
        }
    }
}

impl RunningAgent {
    /// The agent's stdout (once).
    pub fn take_stdout(&mut self) -> Option<File> {
        self.stdout.take()
    }

    /// The agent's stderr (once).
    pub fn take_stderr(&mut self) -> Option<File> {
        self.stderr.take()
    }

    /// Sends `signal` to the agent's process group, unless the agent has been reaped (its
    /// group id could then name someone else's group).
    pub fn signal_group(&self, signal: Signal) {
        if self.exit.is_none()
            && let Some(pid) = Pid::from_raw(self.process.pid)
        {
            let _ = kill_process_group(pid, signal);
        }
    }

    fn reap(&mut self, flags: libc::c_int) -> Option<AgentExit> {
        if self.exit.is_some() {
            return self.exit;
        }
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child; status is a valid out-pointer.
            let reaped = unsafe { libc::waitpid(self.process.pid, &mut status, flags) };
            if reaped == self.process.pid {
                self.exit = Some(decode(status));
                return self.exit;
            }
            if reaped < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            if reaped < 0 {
                // Not our child any more (reaped elsewhere): it has ended, how is unknown.
                self.exit = Some(AgentExit {
                    code: None,
                    signal: None,
                });
                return self.exit;
            }
            return None;
        }
    }

    /// Waits for the agent process to exit (its children may live on: see `stop_leftovers`).
    pub fn wait(&mut self) -> AgentExit {
        self.reap(0).unwrap_or(AgentExit {
            code: None,
            signal: None,
        })
    }

    /// Whether the agent has exited, without blocking; the exit when it has.
    pub fn try_wait(&mut self) -> Option<AgentExit> {
        self.reap(libc::WNOHANG)
    }

    /// Waits until the agent exits, `wake` becomes readable, or `timeout` passes, whichever
    /// comes first. Without a pidfd it falls back to checking every 10 ms.
    pub fn wait_timeout(
        &mut self,
        timeout: Duration,
        wake: Option<std::os::fd::BorrowedFd<'_>>,
    ) -> Waited {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        if let Some(exit) = self.try_wait() {
            return Waited::Exited(exit);
        }
        let Some(pidfd) = &self.pidfd else {
            std::thread::sleep(timeout.min(Duration::from_millis(10)));
            return match self.try_wait() {
                Some(exit) => Waited::Exited(exit),
                None => Waited::TimedOut,
            };
        };
        let limit = Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let mut fds = vec![PollFd::new(pidfd, PollFlags::IN)];
        if let Some(fd) = &wake {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        let _ = poll(&mut fds, Some(&limit));
        let woken = fds.get(1).is_some_and(|fd| !fd.revents().is_empty());
        drop(fds);
        if let Some(exit) = self.try_wait() {
            return Waited::Exited(exit);
        }
        if woken {
            Waited::Woken
        } else {
            Waited::TimedOut
        }
    }

    /// Stops the agent and everything of its round: SIGTERM to every process of the round,
    /// up to `grace` for them to exit, then SIGKILL. Returns how the agent ended.
    pub fn stop(&mut self, grace: Duration) -> AgentExit {
        self.settled.store(true, Ordering::Relaxed);
        self.signal_group(Signal::TERM);
        kill_round(&self.marker, grace);
        self.signal_group(Signal::KILL);
        self.wait()
    }

    /// After the agent exited: stops whatever of the round is still running (children it left
    /// behind, detached or not).
    pub fn stop_leftovers(&self, grace: Duration) -> usize {
        self.settled.store(true, Ordering::Relaxed);
        kill_round(&self.marker, grace)
    }
}

impl Drop for RunningAgent {
    /// However its owner leaves (an error or a panic between the start and the end of the
    /// round), the round does not outlive it: the agent's whole process group and every
    /// process of the round are killed, and the agent is reaped.
    fn drop(&mut self) {
        if self.settled.load(Ordering::Relaxed) {
            return;
        }
        self.signal_group(Signal::KILL);
        kill_round(&self.marker, Duration::ZERO);
        let _ = self.reap(libc::WNOHANG);
    }
}
