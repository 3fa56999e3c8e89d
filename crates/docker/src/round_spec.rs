//! A docker round's description, from what the engine tells every sandbox of a round: the
//! container (image, mounts, limits, network, labels), the variables that go through a file
//! rather than the container's configuration, and the task's volume. The round host starts
//! `ganger docker-round` ([`crate::run_docker_round`]) with this description in its
//! environment.
//!
//! Keys never enter the container's configuration (Docker writes it to disk): the shim
//! writes every variable but a few harmless ones to a file in a directory on `/dev/shm`
//! (memory), mounts it at `/run/ganger`, and the container's entry reads and deletes it
//! before it starts the agent.

use crate::container::RoundContainer;
use crate::labels;
use ganger_sandbox::{
    AgentCommand, Confinement, Network, RELAY_JS, RELAY_SOCKET_IN_SANDBOX, SandboxError,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The variable that carries the container's description to the shim.
pub(crate) const SPEC_ENV: &str = "GANGER_DOCKER_SPEC";
/// Where the variables file is mounted in the container.
const ENV_MOUNT: &str = "/run/ganger";
/// Variables that go into the container's configuration; every other one goes through the
/// file on the memory-backed mount.
const PUBLIC: [&str; 9] = [
    "HOME", "PWD", "TERM", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME",
];
/// The container's entry: read the variables, delete their file, start the agent.
const ENTRY: &str = "set -a; . /run/ganger/env; set +a; rm -f /run/ganger/env; exec \"$@\"";

/// `ganger.toml`'s settings of the docker sandbox that shape a round's container.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DockerSettings {
    /// The Docker network a `shared` round joins.
    pub network: String,
    /// Memory limit as written (`"4g"`, `"512m"`); unset: none.
    pub memory: Option<String>,
    /// CPUs; unset: no limit.
    pub cpus: Option<f64>,
    /// Most processes.
    pub pids: Option<i64>,
}

/// What the shim needs: the container, and the names of the variables it writes to the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// The directory on `/dev/shm` holding a round's variables file while its shim runs.
pub(crate) fn env_dir(token: &str) -> PathBuf {
    PathBuf::from(format!("/dev/shm/ganger-{token}"))
}

/// The name of a round's container.
pub(crate) fn container_name(token: &str) -> String {
    format!("ganger-{token}")
}

/// The name of a task's volume: the task's slug and a short hash of the main checkout.
fn volume_name(repo: &Path, slug: &str) -> String {
    format!("ganger-{slug}-{}", short_hash(&repo.to_string_lossy()))
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
fn parse_memory(text: &str) -> Result<i64, SandboxError> {
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
        _ => Err(SandboxError::unusable(format!(
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

/// The description of `command`'s round in `image`.
pub(crate) fn shim_spec(
    settings: &DockerSettings,
    round: &Confinement<'_>,
    image: String,
    command: &AgentCommand,
) -> Result<ShimSpec, SandboxError> {
    let worktree = round.worktree.to_string_lossy().into_owned();
    let home = round.home.to_string_lossy().into_owned();
    let volume = volume_name(round.repo, round.task);
    let env_dir = env_dir(&command.token);
    let mut binds = vec![if round.writable {
        format!("{worktree}:{worktree}")
    } else {
        format!("{worktree}:{worktree}:ro")
    }];
    binds.extend(
        round
            .read_only
            .iter()
            .filter(|p| p.exists())
            .map(|p| format!("{0}:{0}:ro", p.display())),
    );
    if round.writable {
        binds.extend(
            round
                .rw
                .iter()
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
    let repo = round.repo.to_string_lossy().into_owned();
    let mut task_labels = HashMap::from([
        (labels::MANAGED.to_owned(), "1".to_owned()),
        (labels::REPO.to_owned(), repo),
        (labels::TASK.to_owned(), round.task.to_owned()),
    ]);
    let volume_labels = task_labels.clone();
    task_labels.insert(labels::ROUND.to_owned(), round.round.to_string());
    task_labels.insert(labels::TOKEN.to_owned(), command.token.clone());
    let mut cmd = vec!["/bin/sh".into(), "-c".into(), ENTRY.into(), "ganger".into()];
    let door = round
        .gateway
        .as_ref()
        .filter(|_| round.network == Network::Gateway);
    if let Some(door) = door {
        // The image's Node carries the agent's connections to the gateway's socket.
        binds.push(format!(
            "{}:{RELAY_SOCKET_IN_SANDBOX}",
            door.socket.display()
        ));
        cmd.extend([
            "node".to_owned(),
            "-e".to_owned(),
            RELAY_JS.to_owned(),
            door.port.to_string(),
            RELAY_SOCKET_IN_SANDBOX.to_owned(),
        ]);
    }
    cmd.push(round.image_program.clone());
    cmd.extend(
        command
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    let network_mode = match round.network {
        Network::Shared => settings.network.clone(),
        Network::None | Network::Gateway => "none".into(),
    };
    Ok(ShimSpec {
        container: RoundContainer {
            name: container_name(&command.token),
            image,
            cmd,
            env: public,
            working_dir: worktree,
            user: owner_of(round.worktree),
            labels: task_labels,
            binds,
            tmpfs: HashMap::from([("/tmp".to_owned(), "rw,exec,nosuid,size=2g".to_owned())]),
            network_mode,
            memory: settings.memory.as_deref().map(parse_memory).transpose()?,
            nano_cpus: settings.cpus.map(|c| (c * 1e9) as i64),
            pids: settings.pids,
            read_only_root: true,
            stdin: command.stdin.is_some(),
        },
        env_dir,
        secret_names,
        volume,
        volume_dir: round.home.to_path_buf(),
        volume_labels,
        grace_ms: round.grace.as_millis() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn keys_stay_out_of_the_container_and_a_read_only_round_binds_read_only() {
        let command = AgentCommand {
            program: "/home/u/.cache/ganger/agents/x/bin/agent".into(),
            args: vec!["run".into(), "--json".into()],
            env: vec![
                ("HOME".into(), "/s/home".into()),
                ("PATH".into(), "/usr/bin".into()),
                ("MOCK_API_KEY".into(), "sk-secret".into()),
            ],
            cwd: "/w".into(),
            stdin: Some(b"prompt".to_vec()),
            token: "tok".into(),
            use_cgroup: true,
        };
        let nothing = || Vec::new();
        let no_image = || Err("not asked".to_owned());
        let round = Confinement {
            worktree: Path::new("/w"),
            writable: false,
            read_only: Vec::new(),
            rw: Vec::new(),
            home: Path::new("/s/home"),
            network: Network::None,
            gateway: None,
            grace: Duration::from_secs(10),
            repo: Path::new("/repo"),
            task: "t1",
            round: 2,
            image_program: "agent".into(),
            secret_files: Vec::new(),
            hidden: &nothing,
            image: &no_image,
        };
        let settings = DockerSettings {
            network: "host".into(),
            ..DockerSettings::default()
        };
        let spec = shim_spec(&settings, &round, "img:1".into(), &command).unwrap();
        let container = &spec.container;
        assert_eq!(spec.secret_names, ["MOCK_API_KEY"]);
        assert!(!container.env.iter().any(|e| e.contains("sk-secret")));
        assert!(container.env.contains(&"GANGER_ROUND=tok".to_owned()));
        assert_eq!(container.binds[0], "/w:/w:ro");
        assert_eq!(&container.cmd[4..], ["agent", "run", "--json"]);
        assert_eq!(container.network_mode, "none");
        assert_eq!(container.name, "ganger-tok");
        assert_eq!(container.labels[labels::ROUND], "2");
        assert_eq!(spec.volume, format!("ganger-t1-{}", short_hash("/repo")));
        assert_eq!(spec.env_dir, PathBuf::from("/dev/shm/ganger-tok"));
        assert!(container.stdin);

        // A round whose way out is the gateway: no network, the socket mounted, the agent
        // behind the image's Node relay.
        let door = ganger_sandbox::GatewayDoor {
            socket: "/run/g/s".into(),
            port: 4321,
        };
        let sealed = Confinement {
            network: Network::Gateway,
            gateway: Some(door),
            ..round
        };
        let spec = shim_spec(&settings, &sealed, "img:1".into(), &command).unwrap();
        let container = &spec.container;
        assert_eq!(container.network_mode, "none");
        assert!(
            container
                .binds
                .contains(&format!("/run/g/s:{RELAY_SOCKET_IN_SANDBOX}"))
        );
        assert_eq!(&container.cmd[4..6], ["node", "-e"]);
        assert_eq!(
            &container.cmd[7..],
            ["4321", RELAY_SOCKET_IN_SANDBOX, "agent", "run", "--json"]
        );
    }

    #[test]
    fn memory_sizes_read() {
        assert_eq!(parse_memory("4g").ok(), Some(4 << 30));
        assert_eq!(parse_memory("512m").ok(), Some(512 << 20));
        assert_eq!(parse_memory("1024").ok(), Some(1024));
        assert!(parse_memory("lots").is_err());
        assert!(parse_memory("0g").is_err());
    }
}
