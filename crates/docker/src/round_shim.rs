//! `ganger docker-round`: the process the round host starts for a docker round. It writes
//! the agent's variables to a file on `/dev/shm` (memory, never disk), makes the task's
//! volume, runs the container to its end through the Docker Engine API with this process's
//! stdin copied to its stdin as it comes (the prompt, or a warm agent's conversation) and its
//! output on this process's, deletes the file, and exits with the
//! container's status. SIGTERM stops the container and still removes it. So the host follows
//! a docker round exactly as it follows a local one (its process group, its pipes, its
//! signals).

use crate::client::Docker;
use crate::round_spec::{SPEC_ENV, ShimSpec};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// `value` quoted for a POSIX shell.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

fn is_name(key: &str) -> bool {
    !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn write_env_file(dir: &Path, names: &[String]) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o700).create(dir)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join("env"))?;
    let mut text = String::new();
    for name in names.iter().filter(|name| is_name(name)) {
        if let Some(value) = std::env::var_os(name) {
            text.push_str(&format!("{name}={}\n", quoted(&value.to_string_lossy())));
        }
    }
    file.write_all(text.as_bytes())
}

/// The exit code of a docker round whose container Docker could not run or follow to its
/// end (`docker run`'s own code for a failure of the daemon).
pub const DOCKER_FAILED: i32 = 125;

/// What begins the shim's line on stderr when Docker failed it.
pub const FAILURE_PREFIX: &str = "ganger docker-round: ";

/// Why Docker failed a round, from its exit code and the last lines of its stderr: the
/// shim's own line, when it wrote one.
pub fn docker_failure(exit_code: Option<i32>, stderr_tail: &[String]) -> Option<String> {
    if exit_code != Some(DOCKER_FAILED) {
        return None;
    }
    stderr_tail
        .iter()
        .rev()
        .find_map(|line| line.strip_prefix(FAILURE_PREFIX))
        .map(|why| format!("Docker failed during the round: {why}"))
}

/// Runs the docker round described in this process's environment; returns the exit status.
pub fn run_docker_round() -> i32 {
    let mut stderr = std::io::stderr();
    let fail = |stderr: &mut std::io::Stderr, message: String| {
        let _ = writeln!(stderr, "{FAILURE_PREFIX}{message}");
        DOCKER_FAILED
    };
    let Some(spec) = std::env::var(SPEC_ENV)
        .ok()
        .and_then(|json| serde_json::from_str::<ShimSpec>(&json).ok())
    else {
        return fail(
            &mut stderr,
            format!("no container description in {SPEC_ENV}"),
        );
    };
    let docker = match Docker::connect() {
        Ok(docker) => docker,
        Err(e) => return fail(&mut stderr, e.to_string()),
    };
    if let Err(e) = std::fs::create_dir_all(&spec.volume_dir) {
        return fail(&mut stderr, format!("{}: {e}", spec.volume_dir.display()));
    }
    if let Err(e) =
        docker.ensure_bind_volume(&spec.volume, &spec.volume_dir, spec.volume_labels.clone())
    {
        return fail(&mut stderr, e.to_string());
    }
    if let Err(e) = write_env_file(&spec.env_dir, &spec.secret_names) {
        let _ = std::fs::remove_dir_all(&spec.env_dir);
        return fail(&mut stderr, format!("{}: {e}", spec.env_dir.display()));
    }
    // Copied as it comes: a cold round's prompt, or a warm agent's whole conversation.
    let input: Option<Box<dyn std::io::Read + Send>> = spec
        .container
        .stdin
        .then(|| Box::new(std::io::stdin()) as Box<dyn std::io::Read + Send>);
    let mut stdout = std::io::stdout();
    let ran = docker.run_round(
        &spec.container,
        input,
        &mut stdout,
        &mut stderr,
        std::time::Duration::from_millis(spec.grace_ms),
    );
    let _ = std::fs::remove_dir_all(&spec.env_dir);
    match ran {
        Ok(code) => i32::try_from(code.clamp(0, 255)).unwrap_or(DOCKER_FAILED),
        Err(e) => fail(&mut stderr, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_for_the_shell() {
        assert_eq!(quoted("a'b $x"), "'a'\\''b $x'");
        assert!(is_name("OPENAI_API_KEY"));
        assert!(!is_name("1X") && !is_name("A-B") && !is_name(""));
    }
}
