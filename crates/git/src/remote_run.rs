//! Running a git command that talks to a remote (clone, fetch, push, ls-remote) so that a
//! remote that accepts the connection and then says nothing cannot hold ganger: the command
//! is ended once it has been silent for the remote's patience (no byte of progress or output),
//! with every process it started (its transport helper, ssh), and fails as
//! [`GitError::Silent`] naming the remote. A transfer that keeps moving is never cut: the
//! commands are run with `--progress` where git has it, and each line of progress is a sign of
//! life. Only git's own transports are allowed (`GIT_ALLOW_PROTOCOL`): a remote helper
//! (`ext::`, `fd::`) is refused by git itself even where a user's configuration allows it.

use crate::command::Git;
use crate::error::GitError;
use std::ffi::OsString;
use std::io::Read;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a remote may stay silent before its command is ended, unless
/// `GANGER_REMOTE_SILENCE` (seconds) says otherwise.
pub const REMOTE_SILENCE: Duration = Duration::from_secs(30);

/// The variable that sets [`REMOTE_SILENCE`] for a process (an operator's knob, and the
/// tests' way to meet a silent remote in seconds).
pub const SILENCE_ENV: &str = "GANGER_REMOTE_SILENCE";

/// The transports git may use for a remote: its own.
const ALLOWED_PROTOCOLS: &str = "file:git:http:https:ssh";

/// The most of a command's stderr kept for its error (the end, where git says why).
const KEPT_STDERR: usize = 8 * 1024;

/// How long a remote may stay silent in this process.
pub fn remote_silence() -> Duration {
    std::env::var(SILENCE_ENV)
        .ok()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .map_or(REMOTE_SILENCE, Duration::from_secs_f64)
}

/// What the command's readers tell the waiting thread.
enum Heard {
    /// A piece of stderr (progress, or why it failed).
    Err(Vec<u8>),
    /// Some of its stdout arrived (the rest is collected by its reader).
    Out,
    /// A stream ended; its bytes, for stdout.
    Closed(Option<Vec<u8>>),
}

impl Git {
    /// Runs git `args`, which talk to the remote `peer`, and returns its stdout; ended as
    /// [`GitError::Silent`] after [`remote_silence`] without a byte from it.
    pub fn run_remote(&self, args: &[&str], peer: &str) -> Result<Vec<u8>, GitError> {
        self.run_remote_within(args, peer, remote_silence())
    }

    /// [`Git::run_remote`] with a silence of its own.
    pub fn run_remote_within(
        &self,
        args: &[&str],
        peer: &str,
        silence: Duration,
    ) -> Result<Vec<u8>, GitError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let mut command = self.command(&args);
        command
            .env("GIT_ALLOW_PROTOCOL", ALLOWED_PROTOCOLS)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group: ended with every helper it started.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        #[expect(
            clippy::disallowed_methods,
            reason = "git is a helper tool run to completion, not an agent"
        )]
        let mut child = command.spawn().map_err(GitError::Spawn)?;
        let (tx, heard) = mpsc::channel();
        if let Some(mut stderr) = child.stderr.take() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0_u8; 4096];
                loop {
                    match stderr.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if tx.send(Heard::Err(buf[..n].to_vec())).is_err() {
                                break;
                            }
                        }
                    }
                }
                let _ = tx.send(Heard::Closed(None));
            });
        }
        if let Some(mut stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let mut buf = [0_u8; 16 * 1024];
                loop {
                    match stdout.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            all.extend_from_slice(&buf[..n]);
                            let _ = tx.send(Heard::Out);
                        }
                    }
                }
                let _ = tx.send(Heard::Closed(Some(all)));
            });
        }
        let mut stderr = Vec::new();
        let mut stdout = Vec::new();
        let mut open = 2;
        let mut last = Instant::now();
        while open > 0 {
            let left = silence.saturating_sub(last.elapsed());
            match heard.recv_timeout(left) {
                Ok(Heard::Err(bytes)) => {
                    stderr.extend_from_slice(&bytes);
                    if stderr.len() > 2 * KEPT_STDERR {
                        stderr.drain(..stderr.len() - KEPT_STDERR);
                    }
                    last = Instant::now();
                }
                Ok(Heard::Out) => last = Instant::now(),
                Ok(Heard::Closed(out)) => {
                    open -= 1;
                    if let Some(out) = out {
                        stdout = out;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    end_group(child.id());
                    let _ = child.wait();
                    return Err(GitError::Silent {
                        args: crate::command::joined(&args),
                        peer: peer.to_owned(),
                        silence,
                    });
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait().map_err(GitError::Spawn)?;
        if status.success() {
            return Ok(stdout);
        }
        let said = last_words(&stderr);
        Err(GitError::Command {
            args: crate::command::joined(&args),
            dir: self.dir().to_path_buf(),
            stderr: if said.is_empty() {
                format!("exit status {status}")
            } else {
                said
            },
        })
    }
}

/// Kills the process group led by `pid` (git and the helpers it started).
fn end_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// What git said last, without its progress lines (each rewritten in place with `\r`).
fn last_words(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|line| !line.is_empty() && !is_progress(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a line of stderr is git's progress (`Receiving objects:  12% (3/25)`, relayed
/// `remote: Counting objects: ...`).
fn is_progress(line: &str) -> bool {
    let line = line.strip_prefix("remote: ").unwrap_or(line);
    [
        "Enumerating objects",
        "Counting objects",
        "Compressing objects",
        "Receiving objects",
        "Resolving deltas",
        "Writing objects",
        "Total ",
        "Delta compression",
        "Unpacking objects",
        "Updating files",
    ]
    .iter()
    .any(|start| line.starts_with(start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_remote_that_accepts_and_never_answers_is_left_after_its_silence() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut sink = [0_u8; 1024];
            while socket.read(&mut sink).is_ok_and(|n| n > 0) {}
        });
        let dir = tempfile::tempdir().unwrap();
        let url = format!("git://127.0.0.1:{port}/app.git");
        let began = Instant::now();
        let failed = Git::new(dir.path())
            .run_remote_within(
                &["ls-remote", "--heads", "--", &url],
                &url,
                Duration::from_millis(500),
            )
            .unwrap_err();
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{:?}",
            began.elapsed()
        );
        let text = failed.to_string();
        assert!(matches!(failed, GitError::Silent { .. }), "{text}");
        assert!(text.contains(&url) && text.contains("silent"), "{text}");
        // git, killed, closed its connection: the server saw the end.
        held.join().unwrap();
    }

    #[test]
    fn a_remote_helper_is_refused_by_git_whatever_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let touched = dir.path().join("touched");
        let ext = format!("ext::sh -c touch% {}", touched.display());
        let failed = Git::new(dir.path())
            .with_env("GIT_CONFIG_COUNT", "1")
            .with_env("GIT_CONFIG_KEY_0", "protocol.ext.allow")
            .with_env("GIT_CONFIG_VALUE_0", "always")
            .run_remote(&["ls-remote", "--", &ext], "ext")
            .unwrap_err();
        assert!(!touched.exists(), "git ran ext::'s command: {failed}");
    }

    #[test]
    fn progress_is_not_why_a_command_failed() {
        let said = last_words(
            b"Receiving objects:  12% (3/25)\rReceiving objects: 100% (25/25), done.\n\
              remote: Counting objects: 5\nfatal: the remote hung up unexpectedly\n",
        );
        assert_eq!(said, "fatal: the remote hung up unexpectedly");
    }
}
