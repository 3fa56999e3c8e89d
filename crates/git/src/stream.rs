//! git's output as it comes, for output too big to hold at once (a big patch): the process
//! runs while its reader reads, and is stopped when the reader is dropped early. What it says
//! on stderr (its last [`STDERR_KEPT`] bytes) is kept for the error when it fails.

use crate::command::Git;
use crate::error::GitError;
use std::ffi::OsStr;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Stdio};

/// How much of git's stderr a failure keeps.
const STDERR_KEPT: usize = 4096;

/// A running git's stdout.
#[derive(Debug)]
pub struct GitStream {
    child: Child,
    stdout: ChildStdout,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    args: String,
    dir: PathBuf,
    /// The stream reached its end (and git's exit status was read).
    ended: bool,
}

impl Git {
    /// Runs git with its stdout read as it comes.
    pub fn stream<I, S>(&self, args: I) -> Result<GitStream, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args = crate::command::owned(args);
        let mut command = self.command(&args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        #[expect(
            clippy::disallowed_methods,
            reason = "git is a helper tool read as it runs, not an agent"
        )]
        let mut child = command.spawn().map_err(GitError::Spawn)?;
        let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(GitError::Spawn(std::io::Error::other(
                "git's output could not be read",
            )));
        };
        let stderr = std::thread::Builder::new()
            .name("git-stderr".into())
            .spawn(move || {
                let mut kept = Vec::new();
                let mut buffer = [0u8; 4096];
                while let Ok(read) = stderr.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    kept.extend_from_slice(&buffer[..read]);
                    if kept.len() > STDERR_KEPT {
                        kept.drain(..kept.len() - STDERR_KEPT);
                    }
                }
                kept
            })
            .ok();
        Ok(GitStream {
            child,
            stdout,
            stderr,
            args: crate::command::joined(&args),
            dir: self.dir().to_owned(),
            ended: false,
        })
    }
}

impl GitStream {
    /// At the end of the output: git's exit, an error when it failed.
    fn finish(&mut self) -> std::io::Result<()> {
        self.ended = true;
        let status = self.child.wait()?;
        let stderr = self
            .stderr
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        Err(std::io::Error::other(crate::command::failed(
            self.args.clone(),
            &self.dir,
            &stderr,
            status,
        )))
    }
}

impl Read for GitStream {
    /// git's output; at its end, an error when git failed.
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if self.ended {
            return Ok(0);
        }
        let read = self.stdout.read(buffer)?;
        if read == 0 && !buffer.is_empty() {
            self.finish()?;
        }
        Ok(read)
    }
}

impl Drop for GitStream {
    /// A stream dropped before its end stops git.
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::TestRepo;

    #[test]
    fn output_is_read_as_it_comes_and_a_failure_keeps_gits_message() {
        let repo = TestRepo::new();
        let mut log = String::new();
        Git::new(repo.root())
            .stream(["log", "--format=%s"])
            .unwrap()
            .read_to_string(&mut log)
            .unwrap();
        assert!(!log.trim().is_empty(), "{log:?}");
        let mut nothing = Vec::new();
        let error = Git::new(repo.root())
            .stream(["diff", "no-such-commit", "HEAD"])
            .unwrap()
            .read_to_end(&mut nothing)
            .unwrap_err();
        assert!(error.to_string().contains("no-such-commit"), "{error}");
    }
}
