//! Running a round in a sandbox: what `start` checks before it makes anything (the sandbox
//! can run here, the paths are inside the worktree, no ignored file would be exposed or
//! hidden), and what the round host tells the task's sandbox of a round so that it confines
//! the round's command. The sandboxes themselves are behind one trait
//! ([`ganger_sandbox::Sandbox`]: local and bubblewrap in `ganger-sandbox`, Docker in
//! `ganger-docker`); [`sandbox`] is the one place that chooses one by its kind.
//!
//! In a sandbox the agent gets a home of its own per task (`.ganger/tasks/SLUG/agent`), a
//! clean environment (no variable of the user's but a short list of harmless ones), and no
//! git: the main repository's `.git` is out of its sight, so the commit stays with ganger.

mod env;
mod paths;

pub(crate) use env::sandbox_environment;
pub(crate) use paths::{check_ignored, check_rw_paths};

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_docker::{DockerSandbox, DockerSettings};
use ganger_sandbox::{
    AgentCommand, BwrapSandbox, LocalSandbox, Network, Sandbox, SandboxError, SandboxKind,
};
use ganger_store::Task;
use std::path::{Path, PathBuf};

/// The sandbox of `kind`, with this workspace's settings for it.
pub(crate) fn sandbox(ws: &Workspace, kind: SandboxKind) -> Box<dyn Sandbox> {
    match kind {
        SandboxKind::Local => Box::new(LocalSandbox),
        SandboxKind::Bwrap => Box::new(BwrapSandbox),
        SandboxKind::Docker => {
            let docker = &ws.config.sandbox.docker;
            Box::new(DockerSandbox {
                settings: DockerSettings {
                    network: docker.network.clone(),
                    memory: docker.memory.clone(),
                    cpus: docker.cpus,
                    pids: docker.pids,
                },
            })
        }
    }
}

/// A sandbox's refusal as the engine reports it, with its hint.
fn refused(error: SandboxError) -> EngineError {
    if matches!(error, SandboxError::Unavailable { .. }) {
        return EngineError::from(error);
    }
    let hint = error.hint().map(str::to_owned);
    let refused = EngineError::invalid(error.to_string());
    match hint {
        Some(hint) => refused.hint(hint),
        None => refused,
    }
}

/// The sandbox settings of a task, read back from its record.
pub(crate) struct TaskSandbox {
    pub sandbox: Box<dyn Sandbox>,
    pub network: Network,
    pub rw: Vec<String>,
}

impl TaskSandbox {
    pub fn of(ws: &Workspace, task: &Task) -> Result<TaskSandbox> {
        Ok(TaskSandbox {
            sandbox: sandbox(ws, task.sandbox),
            network: task.network,
            rw: task.rw.clone(),
        })
    }

    /// Whether the agent runs isolated (its own home, a clean environment, no git).
    pub fn isolates(&self) -> bool {
        self.sandbox.isolates()
    }

    /// Whether the agent runs as the user who runs ganger (see
    /// [`ganger_sandbox::Sandbox::runs_as_the_user`]).
    pub fn runs_as_the_user(&self) -> bool {
        self.sandbox.runs_as_the_user()
    }

    /// The sandbox's name, as the task records it.
    pub fn kind(&self) -> SandboxKind {
        self.sandbox.kind()
    }

    /// After a round, whatever happened to its host's children: what the round left in the
    /// sandbox is removed.
    pub fn after_round(&self, token: &str) {
        self.sandbox.after_round(token);
    }
}

/// Whether the task's agent runs isolated: then its sessions are where only its sandbox sees
/// them. A record that names no known sandbox counts as isolated.
pub(crate) fn isolated(ws: &Workspace, task: &Task) -> bool {
    TaskSandbox::of(ws, task).map_or(true, |sandbox| sandbox.isolates())
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
        None => config
            .default
            .value()
            .map_err(|e| EngineError::invalid(format!("sandbox.default in ganger.toml: {e}")))?,
    };
    let chosen = sandbox(ws, kind);
    let asked = network;
    let network = match network {
        Some(network) => network,
        None => config
            .network
            .value()
            .map_err(|e| EngineError::invalid(format!("sandbox.network in ganger.toml: {e}")))?,
    };
    // `sandbox.network = "none"` is meant for sandboxed tasks: an unisolated one keeps the
    // host's.
    let network = if !chosen.isolates() && asked.is_none() {
        Network::Shared
    } else {
        network
    };
    // `gateway` needs the gateway: asked for without it, refused; by default, the host's.
    let network = match (network, ws.config.gateway.enabled, asked) {
        (Network::Gateway, false, Some(_)) => {
            return Err(EngineError::invalid(
                "--network gateway needs the model gateway, which ganger.toml turns off ([gateway] enabled = false)",
            ));
        }
        (Network::Gateway, false, None) => Network::Shared,
        (network, _, _) => network,
    };
    allow_list(ws, &[])?;
    chosen.check_options(network, rw).map_err(refused)?;
    check_rw_paths(rw)?;
    chosen.check_available().map_err(refused)?;
    Ok(TaskSandbox {
        sandbox: chosen,
        network,
        rw: rw.to_vec(),
    })
}

/// The hosts a `gateway` round may reach through the gateway's proxy: `[sandbox] allow` and
/// the task's own; an entry that is not `HOST:PORT` is bad input.
pub(crate) fn allow_list(ws: &Workspace, task: &[String]) -> Result<Vec<ganger_gateway::HostPort>> {
    ws.config
        .sandbox
        .allow
        .iter()
        .map(|entry| (entry, "[sandbox] allow in ganger.toml"))
        .chain(task.iter().map(|entry| (entry, "--allow")))
        .map(|(entry, source)| {
            ganger_gateway::HostPort::parse(entry)
                .map_err(|e| EngineError::invalid(format!("{source}: {e}")))
        })
        .collect()
}

/// What is checked before each sandboxed round is recorded: no ignored file under a path
/// the sandbox mounts in `worktree`.
pub(crate) fn check_round(ws: &Workspace, sandbox: &TaskSandbox, worktree: &Path) -> Result<()> {
    if !sandbox.isolates() {
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

/// Refuses a round whose sandbox lacks what it needs for `agent` (Docker: its worker image,
/// which Docker would otherwise try to pull from a registry).
pub(crate) fn check_ready(ws: &Workspace, sandbox: &TaskSandbox, agent: &str) -> Result<()> {
    let image = || crate::env::image::worker_image(&ws.config, agent).map_err(|e| e.message);
    sandbox.sandbox.check_ready(agent, &image).map_err(refused)
}

/// The read-only and writable paths of a task, absolute, from `ganger.toml` and `--rw`.
fn mount_paths(ws: &Workspace, task: &Task) -> (Vec<PathBuf>, Vec<PathBuf>) {
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

/// The worktrees of the repository other than `own`, read from `.git/worktrees/*/gitdir`.
fn other_worktrees(ws: &Workspace, own: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(ws.repo.common_dir.join("worktrees")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("gitdir")).ok())
        .filter_map(|gitdir| Path::new(gitdir.trim()).parent().map(Path::to_path_buf))
        .filter(|path| path != own)
        .collect()
}

/// What ganger keeps out of sight of a task's commands on this host: the main repository's
/// git and `.ganger`, the other worktrees, the user's home.
fn hidden_dirs(ws: &Workspace, task: &Task) -> Vec<PathBuf> {
    let mut hide = vec![
        ws.repo.common_dir.clone(),
        ws.state.root().to_path_buf(),
        ws.repo.main.join(".git"),
    ];
    hide.extend(other_worktrees(ws, &task.worktree));
    if let Some(user_home) = std::env::var_os("HOME") {
        hide.push(PathBuf::from(user_home));
    }
    hide
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
    /// The round's model gateway, for a sandbox whose network is `gateway`.
    pub gateway: Option<&'a ganger_sandbox::GatewayDoor>,
}

/// `command` as its task's sandbox runs it; `image_program` is its program as a worker image
/// has it.
fn confine_as(
    ws: &Workspace,
    c: &Confinement<'_>,
    command: AgentCommand,
    image_program: String,
) -> Result<AgentCommand> {
    let (read_only, rw) = mount_paths(ws, c.task);
    let hidden = || hidden_dirs(ws, c.task);
    let image =
        || crate::env::image::worker_image(&ws.config, &c.task.agent).map_err(|e| e.message);
    let round = ganger_sandbox::Confinement {
        worktree: &c.task.worktree,
        writable: c.writable,
        read_only,
        rw,
        home: c.home,
        network: c.sandbox.network,
        gateway: c.gateway.cloned(),
        grace: c.grace,
        repo: &ws.repo.main,
        task: &c.task.slug,
        round: c.round,
        image_program,
        secret_files: c.task.keys.values().cloned().collect(),
        hidden: &hidden,
        image: &image,
    };
    c.sandbox.sandbox.confine(command, &round).map_err(refused)
}

/// The agent's command as its task's sandbox runs it.
pub(crate) fn confine(
    ws: &Workspace,
    adapter: &dyn ganger_agents::Adapter,
    c: &Confinement<'_>,
    command: AgentCommand,
) -> Result<AgentCommand> {
    // A worker image has an installed agent's CLI on its PATH; the program of a CLI the user
    // brings is the one its settings name.
    let image_program = match adapter.package() {
        Some(_) => adapter.program().to_owned(),
        None => command.program.to_string_lossy().into_owned(),
    };
    confine_as(ws, c, command, image_program)
}

/// A check's command (`sh -c ...`) as its task's sandbox runs it: in the same sandbox as the
/// agent (in Docker, the task's worker image), with the program as given.
pub(crate) fn confine_check(
    ws: &Workspace,
    c: &Confinement<'_>,
    command: AgentCommand,
) -> Result<AgentCommand> {
    let image_program = command.program.to_string_lossy().into_owned();
    confine_as(ws, c, command, image_program)
}
