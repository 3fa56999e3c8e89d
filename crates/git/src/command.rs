//! Running the git CLI: the one place this crate starts a process. The environment is cleaned
//! of variables that would redirect git (a ganger started from a git hook inherits `GIT_DIR`),
//! prompts are off, and messages are in the C locale so that they read the same everywhere.

use crate::error::GitError;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// Variables that point git at another repository, index or work tree; never inherited.
const REDIRECTING_VARS: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// A git invocation builder bound to a directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
    env: Vec<(String, String)>,
}

impl Git {
    /// git run in `dir` (`git -C dir`).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Git {
            dir: dir.into(),
            env: Vec::new(),
        }
    }

    /// The same, with one more environment variable for the commands it runs.
    pub fn with_env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.env.push((
            key.to_owned(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
        self
    }

    /// The directory git runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .stdin(Stdio::null())
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C");
        for var in REDIRECTING_VARS {
            command.env_remove(var);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command
    }

    /// Runs git and returns its stdout; an exit code other than 0 is an error.
    pub fn run<I, S>(&self, args: I) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_with_input(args, None)
    }

    /// Runs git with `input` on its stdin.
    pub fn run_with_input<I, S>(&self, args: I, input: Option<&[u8]>) -> Result<Vec<u8>, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args = owned(args);
        let mut command = self.command(&args);
        let output = match input {
            None => command.output(),
            Some(bytes) => {
                command
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                #[expect(
                    clippy::disallowed_methods,
                    reason = "git is a helper tool run to completion, not an agent"
                )]
                let mut child = command.spawn().map_err(GitError::Spawn)?;
                let stdin = child.stdin.take();
                // Written from a thread of its own while the output is read here, so that a
                // git whose output fills its pipe before it has read all of its input (a long
                // `merge-tree --stdin`) cannot wait on us while we wait on it.
                std::thread::scope(|scope| {
                    if let Some(mut stdin) = stdin {
                        // A git that exits early closes its stdin; its exit status tells why.
                        scope.spawn(move || {
                            let _ = stdin.write_all(bytes);
                        });
                    }
                    child.wait_with_output()
                })
            }
        }
        .map_err(GitError::Spawn)?;
        if output.status.success() {
            Ok(output.stdout)
        } else {
            Err(failed(
                joined(&args),
                &self.dir,
                &output.stderr,
                output.status,
            ))
        }
    }

    /// Runs git and returns its exit code and stdout, whatever the code: for commands whose
    /// exit code is an answer (`merge-tree` exits 1 on a conflict). A code of 128 or more (git
    /// itself failed) is still an error.
    pub fn run_code<I, S>(&self, args: I) -> Result<(i32, Vec<u8>), GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args = owned(args);
        let output = self.command(&args).output().map_err(GitError::Spawn)?;
        let code = output.status.code().unwrap_or(-1);
        if !(0..128).contains(&code) {
            return Err(GitError::Command {
                args: joined(&args),
                dir: self.dir.clone(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok((code, output.stdout))
    }

    /// Runs git and returns its stdout as trimmed text.
    pub fn text<I, S>(&self, args: I) -> Result<String, GitError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.run(args)?;
        Ok(String::from_utf8_lossy(&out).trim_end().to_owned())
    }
}

/// `args`, owned, to run and then to name in an error.
pub(crate) fn owned<I, S>(args: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    args.into_iter().map(|a| a.as_ref().to_owned()).collect()
}

/// The arguments as an error names them.
pub(crate) fn joined(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error of a git that ended with `status`: what it said on `stderr`, or its status when
/// it said nothing.
pub(crate) fn failed(args: String, dir: &Path, stderr: &[u8], status: ExitStatus) -> GitError {
    let stderr = String::from_utf8_lossy(stderr).trim().to_owned();
    GitError::Command {
        args,
        dir: dir.to_owned(),
        stderr: if stderr.is_empty() {
            format!("exit status {status}")
        } else {
            stderr
        },
    }
}
