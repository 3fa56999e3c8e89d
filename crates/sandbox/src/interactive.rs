//! Running an agent's interactive interface for a person (`ganger attach`): in the
//! foreground, on the person's terminal (stdin, stdout and stderr inherited, the same process
//! group, so the terminal's signals reach it), with exactly the environment given.

use crate::error::SandboxError;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// Runs `program` with `args` in `cwd` until it exits; returns its exit code (128 + the
/// signal when a signal ended it).
pub fn run_interactive(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> Result<i32, SandboxError> {
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(env.iter().cloned())
        .current_dir(cwd);
    let status = command.status().map_err(|e| SandboxError::io(program, e))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}
