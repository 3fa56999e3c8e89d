//! The docker sandbox of a task: the round's container (image, mounts, limits, network,
//! labels) and the command that runs it. The round host starts `ganger docker-round`, a
//! small process of ganger's that talks to the Docker Engine API, copies the container's
//! output to its own and exits with the container's status; so the host follows a docker
//! round exactly as it follows a local one (its process group, its pipes, its signals).
//!
//! Keys never enter the container's configuration (Docker writes it to disk): the shim
//! writes every variable but a few harmless ones to a file in a directory on `/dev/shm`
//! (memory), mounts it at `/run/ganger`, and the container's entry reads and deletes it
//! before it starts the agent.

use crate::config::Config;
use crate::error::{EngineError, Result};
use crate::workspace::Workspace;
use ganger_docker::{RoundContainer, labels};
use ganger_sandbox::{AgentCommand, Network};
use ganger_store::Task;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable that carries the container's description to the shim.
pub(crate) const SPEC_ENV: &str = "GANGER_DOCKER_SPEC";
/// Where the variables file is mounted in the container.
pub(crate) const ENV_MOUNT: &str = "/run/ganger";
/// Variables that go into the container's configuration; every other one goes through the
/// file on the memory-backed mount.
const PUBLIC: [&str; 9] = [
    "HOME", "PWD", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME",
];
/// The container's entry: read the variables, delete their file, start the agent.
const ENTRY: &str = "set -a; . /run/ganger/env; set +a; rm -f /run/ganger/env; exec \"$@\"";

/// What the shim needs: the container, and the names of the variables it writes to the file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ShimSpec {
    pub container: RoundContainer,
    /// The variables file's directory on the host (on `/dev/shm`).
    pub env_dir: PathBuf,
    pub secret_names: Vec<String>,
    /// The per-task volume holding the agent's home, and the host directory behind it.
    pub volume: String,
    pub volume_dir: PathBuf,
    pub volume_labels: HashMap<String, String>,
    pub grace_ms: u64,
}

/// The name of a task's volume: the task's slug and a short hash of the main checkout.
pub(crate) fn volume_name(ws: &Workspace, slug: &str) -> String {
    format!(
        "ganger-{slug}-{}",
        short_hash(&ws.repo.main.to_string_lossy())
    )
}

fn short_hash(text: &str) -> String {
    // FNV-1a: stable across runs and machines, enough to tell checkouts apart in a name.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", hash >> 32)
}

/// `4g`, `512m`, `1073741824` as bytes.
pub(crate) fn parse_memory(text: &str) -> Result<i64> {
    let text = text.trim().to_ascii_lowercase();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text.as_str(), ""),
    };
    let scale: i64 = match unit.trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => 0,
    };
    match digits.parse::<i64>() {
        Ok(n) if scale > 0 && n > 0 => Ok(n.saturating_mul(scale)),
        _ => Err(EngineError::invalid(format!(
            "sandbox.docker.memory in ganger.toml is {text:?}; write e.g. \"4g\" or \"512m\""
        ))),
    }
}

/// The `uid:gid` owning `path`, the user the container runs as.
fn owner_of(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(format!("{}:{}", meta.uid(), meta.gid()))
}

/// Everything that makes a round's container.
pub(crate) struct DockerRound<'a> {
    pub ws: &'a Workspace,
    pub task: &'a Task,
    pub round: u32,
    pub image: String,
    /// The agent's program inside the image.
    pub program: String,
    pub home: &'a Path,
    pub network: Network,
    pub writable: bool,
    pub grace: std::time::Duration,
}

fn container(r: &DockerRound<'_>, command: &AgentCommand, config: &Config) -> Result<ShimSpec> {
    let docker = &config.sandbox.docker;
    let worktree = r.task.worktree.to_string_lossy().into_owned();
    let home = r.home.to_string_lossy().into_owned();
    let (read_only, rw) = super::mount_paths(r.ws, r.task);
    let volume = volume_name(r.ws, &r.task.slug);
    let env_dir = PathBuf::from(format!("/dev/shm/ganger-{}", command.token));
    let mut binds = vec![if r.writable {
        format!("{worktree}:{worktree}")
    } else {
        format!("{worktree}:{worktree}:ro")
    }];
    binds.extend(
        read_only
            .iter()
            .filter(|p| p.exists())
            .map(|p| format!("{0}:{0}:ro", p.display())),
    );
    if r.writable {
        binds.extend(
            rw.iter()
                .filter(|p| p.exists())
                .map(|p| format!("{0}:{0}", p.display())),
        );
    }
    binds.push(format!("{volume}:{home}"));
    binds.push(format!("{}:{ENV_MOUNT}", env_dir.display()));
    let mut public = Vec::new();
    let mut secret_names = Vec::new();
    for (key, value) in &command.env {
        let key = key.to_string_lossy().into_owned();
        if key == "PATH" {
            continue;
        }
        if PUBLIC.contains(&key.as_str()) {
            public.push(format!("{key}={}", value.to_string_lossy()));
        } else {
            secret_names.push(key);
        }
    }
    public.push(format!("{}={}", ganger_sandbox::ROUND_ENV, command.token));
    public.push("SHELL=/bin/bash".into());
    let repo = r.ws.repo.main.to_string_lossy().into_owned();
    let mut task_labels = HashMap::from([
        (labels::MANAGED.to_owned(), "1".to_owned()),
        (labels::REPO.to_owned(), repo),
        (labels::TASK.to_owned(), r.task.slug.clone()),
    ]);
    let volume_labels = task_labels.clone();
    task_labels.insert(labels::ROUND.to_owned(), r.round.to_string());
    task_labels.insert(labels::TOKEN.to_owned(), command.token.clone());
    let mut cmd = vec!["/bin/sh".into(), "-c".into(), ENTRY.into(), "ganger".into()];
    cmd.push(r.program.clone());
    cmd.extend(
        command
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    let network_mode = match r.network {
        Network::Shared => docker.network.clone(),
        Network::None => "none".into(),
    };
    Ok(ShimSpec {
        container: RoundContainer {
            name: format!("ganger-{}", command.token),
            image: r.image.clone(),
            cmd,
            env: public,
            working_dir: worktree,
            user: owner_of(&r.task.worktree),
            labels: task_labels,
            binds,
            tmpfs: HashMap::from([("/tmp".to_owned(), "rw,exec,nosuid,size=2g".to_owned())]),
            network_mode,
            memory: docker.memory.as_deref().map(parse_memory).transpose()?,
            nano_cpus: docker.cpus.map(|c| (c * 1e9) as i64),
            pids: docker.pids,
            read_only_root: true,
            stdin: command.stdin.is_some(),
        },
        env_dir,
        secret_names,
        volume,
        volume_dir: r.home.to_path_buf(),
        volume_labels,
        grace_ms: r.grace.as_millis() as u64,
    })
}

/// `command` as a docker round: `ganger docker-round` with the container's description and
/// the agent's variables in its environment.
pub(crate) fn wrap(r: &DockerRound<'_>, command: AgentCommand) -> Result<AgentCommand> {
    let spec = container(r, &command, &r.ws.config)?;
    let json = serde_json::to_string(&spec)
        .map_err(|e| EngineError::invalid(format!("the container's description: {e}")))?;
    let ganger = std::env::current_exe()
        .map_err(|e| EngineError::environment("cannot find ganger's own program", e))?;
    let mut env: Vec<(OsString, OsString)> = command
        .env
        .iter()
        .filter(|(key, _)| spec.secret_names.iter().any(|name| key == name.as_str()))
        .cloned()
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        env.push(("PATH".into(), path));
    }
    if let Some(host) = std::env::var_os("DOCKER_HOST") {
        env.push(("DOCKER_HOST".into(), host));
    }
    env.push((SPEC_ENV.into(), json.into()));
    Ok(AgentCommand {
        program: ganger,
        args: vec!["docker-round".into()],
        env,
        cwd: command.cwd,
        stdin: command.stdin,
        token: command.token,
        // The container's processes are not in a cgroup of ours: the round marker in their
        // environment finds them.
        use_cgroup: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes_read() {
        assert_eq!(parse_memory("4g").ok(), Some(4 << 30));
        assert_eq!(parse_memory("512m").ok(), Some(512 << 20));
        assert_eq!(parse_memory("1024").ok(), Some(1024));
        assert!(parse_memory("lots").is_err());
        assert!(parse_memory("0g").is_err());
    }
}
