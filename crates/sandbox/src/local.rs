//! The local sandbox: the agent runs as the user would run it by hand, in the worktree, but
//! as the leader of its own session and process group, with an explicit environment, its
//! stdin fed from ganger (or /dev/null), its stdout and stderr piped to the round host, a
//! parent-death signal so that it dies with its host, the round marker in its environment and,
//! where possible, a cgroup of its own.

use crate::ROUND_ENV;
use crate::cgroup::Cgroup;
use crate::error::SandboxError;
use crate::members::{RoundMarker, kill_round};
use crate::proc_stat::{ProcessId, proc_stat};
use rustix::process::{Pid, Signal, getpid, kill_process_group};
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::Arc;
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
    child: Child,
    /// A pidfd of the agent, to wait for its exit with a time limit (Linux 5.3+).
    pidfd: Option<std::os::fd::OwnedFd>,
    /// The agent process, named for good.
    pub process: ProcessId,
    /// How to find every process of the round.
    pub marker: RoundMarker,
    exited: Arc<AtomicBool>,
}

/// Starts `command` in the local sandbox.
pub fn spawn_local(command: &AgentCommand) -> Result<RunningAgent, SandboxError> {
    let cgroup = if command.use_cgroup {
        Cgroup::create(&command.token)
    } else {
        None
    };
    let procs = match &cgroup {
        Some(cgroup) => Some(cgroup.procs_file()?),
        None => None,
    };
    let mut cmd = Command::new(&command.program);
    cmd.args(&command.args)
        .env_clear()
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .env(ROUND_ENV, &command.token)
        .current_dir(&command.cwd)
        .stdin(if command.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let parent = getpid();
    let procs_fd = procs.as_ref().map(AsRawFd::as_raw_fd);
    // Runs in the child between fork and exec: only system calls (setsid, prctl, getppid,
    // write), which are async-signal-safe; it allocates nothing and takes no lock.
    let hook = move || {
        rustix::process::setsid().map_err(std::io::Error::from)?;
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
            .map_err(std::io::Error::from)?;
        // The parent may have died before the death signal was armed.
        if rustix::process::getppid() != Some(parent) {
            // An errno, not a message: nothing may allocate between fork and exec.
            return Err(rustix::io::Errno::SRCH.into());
        }
        if let Some(fd) = procs_fd {
            // SAFETY: fd stays open in the parent until spawn returns; writing "0" moves
            // this process into the cgroup.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            rustix::io::write(fd, b"0").map_err(std::io::Error::from)?;
        }
        Ok(())
    };
    // SAFETY: see the hook: it only makes async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(hook);
    }
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the sandbox: the one place agents are started"
    )]
    let spawned = cmd.spawn();
    drop(procs);
    let mut child = match spawned {
        Ok(child) => child,
        Err(source) => {
            if let Some(cgroup) = &cgroup {
                cgroup.remove();
            }
            return Err(SandboxError::Spawn {
                program: command.program.clone(),
                source,
            });
        }
    };
    let pid = child.id() as i32;
    let start_ticks = proc_stat(pid).map_or(0, |stat| stat.start_ticks);
    if let (Some(mut stdin), Some(bytes)) = (child.stdin.take(), command.stdin.clone()) {
        // A large prompt may not fit the pipe before the agent reads: write from a thread.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let pidfd = Pid::from_raw(pid).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    });
    Ok(RunningAgent {
        child,
        pidfd,
        process: ProcessId { pid, start_ticks },
        marker: RoundMarker {
            token: command.token.clone(),
            session: Some(pid),
            cgroup,
        },
        exited: Arc::new(AtomicBool::new(false)),
    })
}

impl RunningAgent {
    /// The agent's stdout (once).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The agent's stderr (once).
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Sends `signal` to the agent's process group, unless the agent has been reaped (its
    /// group id could then name someone else's group).
    pub fn signal_group(&self, signal: Signal) {
        if !self.exited.load(Ordering::SeqCst)
            && let Some(pid) = Pid::from_raw(self.process.pid)
        {
            let _ = kill_process_group(pid, signal);
        }
    }

    /// Waits for the agent process to exit (its children may live on: see `stop_all`).
    pub fn wait(&mut self) -> AgentExit {
        let status = self.child.wait();
        self.exited.store(true, Ordering::SeqCst);
        match status {
            Ok(status) => AgentExit {
                code: status.code(),
                signal: status.signal(),
            },
            Err(_) => AgentExit {
                code: None,
                signal: None,
            },
        }
    }

    /// Whether the agent has exited, without blocking; the exit when it has.
    pub fn try_wait(&mut self) -> Option<AgentExit> {
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.exited.store(true, Ordering::SeqCst);
                Some(AgentExit {
                    code: status.code(),
                    signal: status.signal(),
                })
            }
            _ => None,
        }
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
        self.signal_group(Signal::TERM);
        kill_round(&self.marker, grace);
        self.signal_group(Signal::KILL);
        self.wait()
    }

    /// After the agent exited: stops whatever of the round is still running (children it left
    /// behind, detached or not).
    pub fn stop_leftovers(&self, grace: Duration) -> usize {
        kill_round(&self.marker, grace)
    }
}
