//! Running a round in a sandbox: what `start` checks before it makes anything (the sandbox
//! can run here, the paths are inside the worktree, no ignored file would be exposed or
//! hidden), and how the round host turns the agent's command into a sandboxed one.
//!
//! In a sandbox the agent gets a home of its own per task (`.ganger/tasks/SLUG/agent`), a
//! clean environment (no variable of the user's but a short list of harmless ones), and no
//! git: the main repository's `.git` is out of its sight, so the commit stays with ganger.

mod bwrap;
mod docker;
mod docker_shim;
mod env;
mod paths;

use docker::DockerRound;
pub(crate) use docker_shim::docker_failure;
pub use docker_shim::run_docker_round;
pub(crate) use env::sandbox_environment;
pub(crate) use paths::{check_ignored, check_rw_paths};

use crate::error::{EngineError, Result};
use crate::workspace::Workspace;
use ganger_sandbox::{Network, SandboxKind};
use ganger_store::Task;
use std::path::{Path, PathBuf};

/// The sandbox settings of a task, read back from its record.
#[derive(Debug, Clone)]
pub(crate) struct TaskSandbox {
    pub kind: SandboxKind,
    pub network: Network,
    pub rw: Vec<String>,
}

impl TaskSandbox {
    pub fn of(task: &Task) -> Result<TaskSandbox> {
        Ok(TaskSandbox {
            kind: task.sandbox.parse().map_err(EngineError::invalid)?,
            network: task.network.parse().map_err(EngineError::invalid)?,
            rw: task.rw.clone(),
        })
    }
}

/// The sandbox of a new task from its options and `ganger.toml`, refused when it cannot
/// run on this machine or its options make no sense for it.
pub(crate) fn choose(
    ws: &Workspace,
    kind: Option<SandboxKind>,
    network: Option<Network>,
    rw: &[String],
) -> Result<TaskSandbox> {
    let config = &ws.config.sandbox;
    let kind = match kind {
        Some(kind) => kind,
        None => config.default.parse().map_err(|e: String| {
            EngineError::invalid(format!("sandbox.default in ganger.toml: {e}"))
        })?,
    };
    let asked = network;
    let network = match network {
        Some(network) => network,
        None => config.network.parse().map_err(|e: String| {
            EngineError::invalid(format!("sandbox.network in ganger.toml: {e}"))
        })?,
    };
    // `sandbox.network = "none"` is meant for sandboxed tasks: a local one keeps the host's.
    let network = if kind == SandboxKind::Local && asked.is_none() {
        Network::Shared
    } else {
        network
    };
    if kind == SandboxKind::Local && network == Network::None {
        return Err(EngineError::invalid(
            "--network none needs a sandbox that has a network of its own: --sandbox bwrap or docker",
        ));
    }
    if kind == SandboxKind::Local && !rw.is_empty() {
        return Err(EngineError::invalid(
            "--rw needs a sandbox (bwrap or docker): locally the whole worktree is writable",
        ));
    }
    check_rw_paths(rw)?;
    match kind {
        SandboxKind::Bwrap => {
            bwrap::program()?;
        }
        SandboxKind::Docker => {
            ganger_docker::Docker::connect()
                .map_err(|e| EngineError::from(e).context("--sandbox docker"))?;
        }
        SandboxKind::Local => {}
    }
    Ok(TaskSandbox {
        kind,
        network,
        rw: rw.to_vec(),
    })
}

/// What is checked before each sandboxed round is recorded: no ignored file under a path
/// the sandbox mounts in `worktree`.
pub(crate) fn check_round(ws: &Workspace, sandbox: &TaskSandbox, worktree: &Path) -> Result<()> {
    if !sandbox.kind.isolates() {
        return Ok(());
    }
    let config = &ws.config.sandbox;
    let mounted: Vec<&str> = config
        .read_only
        .iter()
        .chain(config.rw.iter())
        .chain(sandbox.rw.iter())
        .map(String::as_str)
        .collect();
    check_ignored(worktree, &mounted)
}

/// After a round, whatever happened to its host's children: when a docker round's shim did
/// not finish (its variables' directory is still there), its container and that directory
/// are removed.
pub(crate) fn after_round(kind: SandboxKind, token: &str) {
    let env_dir = format!("/dev/shm/ganger-{token}");
    if kind != SandboxKind::Docker || !Path::new(&env_dir).exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(&env_dir);
    if let Ok(docker) = ganger_docker::Docker::connect() {
        let _ = docker.remove_container(&format!("ganger-{token}"));
    }
}

/// The worker image of `agent`: `sandbox.docker.image` when set, else the one `ganger image
/// build` makes for the agent's tested version.
pub(crate) fn worker_image(ws: &Workspace, agent: &str) -> Result<String> {
    crate::image::worker_image(&ws.config, agent)
}

/// Refuses a docker round whose worker image is missing: Docker would try to pull it from a
/// registry instead.
pub(crate) fn check_image(ws: &Workspace, sandbox: &TaskSandbox, agent: &str) -> Result<()> {
    if sandbox.kind != SandboxKind::Docker {
        return Ok(());
    }
    let image = worker_image(ws, agent)?;
    let docker = ganger_docker::Docker::connect()
        .map_err(|e| EngineError::from(e).context("--sandbox docker"))?;
    match docker.image(&image) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(
            EngineError::invalid(format!("the worker image {image} is not built")).hint(format!(
                "`ganger image build --agent {agent}` builds it offline"
            )),
        ),
        Err(e) => Err(EngineError::from(e).context("--sandbox docker")),
    }
}

/// The read-only and writable paths of a task, absolute, from `ganger.toml` and `--rw`.
pub(crate) fn mount_paths(ws: &Workspace, task: &Task) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let config = &ws.config.sandbox;
    let read_only = config
        .read_only
        .iter()
        .map(|p| task.worktree.join(p))
        .collect();
    let rw = config
        .rw
        .iter()
        .chain(task.rw.iter())
        .map(|p| task.worktree.join(p))
        .collect();
    (read_only, rw)
}

/// What a round's command is confined to.
pub(crate) struct Confinement<'a> {
    pub sandbox: &'a TaskSandbox,
    pub task: &'a Task,
    pub round: u32,
    /// The agent's home for the task.
    pub home: &'a Path,
    /// Whether the agent may change the worktree.
    pub writable: bool,
    pub grace: std::time::Duration,
}

/// The agent's command as its task's sandbox runs it.
pub(crate) fn confine(
    ws: &Workspace,
    adapter: &dyn ganger_agents::Adapter,
    c: &Confinement<'_>,
    command: ganger_sandbox::AgentCommand,
) -> Result<ganger_sandbox::AgentCommand> {
    match c.sandbox.kind {
        SandboxKind::Local => Ok(command),
        SandboxKind::Bwrap => {
            bwrap::wrap(ws, c.task, command, c.home, c.sandbox.network, c.writable)
        }
        SandboxKind::Docker => {
            // The image has the agent's CLI on its PATH; the command agent's program is the
            // one its template names.
            let program = if adapter.name() == ganger_agents::command::NAME {
                command.program.to_string_lossy().into_owned()
            } else {
                adapter.program().to_owned()
            };
            confine_in_docker(ws, adapter.name(), program, c, command)
        }
    }
}

/// A check's command (`sh -c ...`) as its task's sandbox runs it: in the same sandbox as the
/// agent (in Docker, the task's worker image), with the program as given.
pub(crate) fn confine_check(
    ws: &Workspace,
    c: &Confinement<'_>,
    command: ganger_sandbox::AgentCommand,
) -> Result<ganger_sandbox::AgentCommand> {
    match c.sandbox.kind {
        SandboxKind::Local => Ok(command),
        SandboxKind::Bwrap => {
            bwrap::wrap(ws, c.task, command, c.home, c.sandbox.network, c.writable)
        }
        SandboxKind::Docker => {
            let program = command.program.to_string_lossy().into_owned();
            confine_in_docker(ws, &c.task.agent, program, c, command)
        }
    }
}

fn confine_in_docker(
    ws: &Workspace,
    agent: &str,
    program: String,
    c: &Confinement<'_>,
    command: ganger_sandbox::AgentCommand,
) -> Result<ganger_sandbox::AgentCommand> {
    let round = DockerRound {
        ws,
        task: c.task,
        round: c.round,
        image: worker_image(ws, agent)?,
        program,
        home: c.home,
        network: c.sandbox.network,
        writable: c.writable,
        grace: c.grace,
    };
    docker::wrap(&round, command)
}
