//! Where a batch's checks run: in the sandbox of its tasks, as each task's own round's checks
//! did. A batch's tasks share one sandbox kind and network (the store takes them so), so the
//! first task's settings are the batch's; the scratch worktree stands in for the task's
//! worktree (writable: checks may build) and the lander's name for the task's (what Docker
//! names its home's volume after), the lander's own directory beside it for the agent's
//! home, and the environment is the sandbox's clean one, or the user's locally.

use crate::base::error::{EngineError, Result};
use crate::env::sandboxing::{
    Confinement, TaskSandbox, check_ready, confine_check, sandbox_environment,
};
use crate::env::workspace::Workspace;
use ganger_agents::CommandPlan;
use ganger_sandbox::{AgentCommand, SandboxKind};
use ganger_store::Task;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Between SIGTERM and SIGKILL when a confined check is stopped.
const GRACE: Duration = Duration::from_secs(2);

/// The sandbox a batch's checks run in.
pub(crate) struct CheckPlace {
    /// The batch's first task, with the scratch worktree for its worktree.
    stand_in: Task,
    sandbox: TaskSandbox,
    home: PathBuf,
    env: Vec<(OsString, OsString)>,
}

impl CheckPlace {
    /// The place of a batch whose first task is `task`, checked in `scratch`.
    pub(crate) fn of(ws: &Workspace, task: &Task, scratch: &Path) -> Result<CheckPlace> {
        let sandbox = TaskSandbox::of(ws, task)?;
        // What a round of the task would be refused for (Docker: its worker image missing).
        check_ready(ws, &sandbox, &task.agent)?;
        let mut stand_in = task.clone();
        stand_in.worktree = scratch.to_path_buf();
        // What a sandbox names after the task (Docker's volume for the home) is the lander's.
        if let Some(name) = scratch.file_name() {
            stand_in.slug = name.to_string_lossy().into_owned();
        }
        let home = scratch.with_extension("home");
        let env = if sandbox.isolates() {
            std::fs::create_dir_all(&home).map_err(|e| EngineError::io("create", &home, e))?;
            let adapter =
                crate::env::agent_env::adapter_for(&task.agent, &ws.config).ok_or_else(|| {
                    EngineError::invalid(format!(
                        "unknown agent {:?} for task {}",
                        task.agent, task.slug
                    ))
                })?;
            let nothing = CommandPlan::new(Vec::new(), Vec::new(), None);
            sandbox_environment(adapter, &ws.config, &nothing, &[], &home, scratch)
        } else {
            crate::env::agent_env::user_environment()
        };
        Ok(CheckPlace {
            stand_in,
            sandbox,
            home,
            env,
        })
    }

    /// Whether the checks run confined (in a sandbox of their own).
    pub(crate) fn isolates(&self) -> bool {
        self.sandbox.isolates()
    }

    /// The sandbox's kind, as the batch's steps name it.
    pub(crate) fn kind(&self) -> SandboxKind {
        self.sandbox.kind()
    }

    /// `command` (a check's `sh -c`, in the scratch worktree) with the place's environment,
    /// as the sandbox runs it.
    pub(crate) fn confine(&self, ws: &Workspace, command: AgentCommand) -> Result<AgentCommand> {
        let command = AgentCommand {
            env: self.env.clone(),
            ..command
        };
        let confinement = Confinement {
            sandbox: &self.sandbox,
            task: &self.stand_in,
            round: 0,
            home: &self.home,
            writable: true,
            grace: GRACE,
            // Under the `gateway` network a batch's checks have no way out: the tasks' own
            // allow-lists are theirs, and the batch has no round whose gateway it could use.
            gateway: None,
        };
        confine_check(ws, &confinement, command)
    }

    /// After a check: what it left in the sandbox (a container) is removed.
    pub(crate) fn after(&self, token: &str) {
        self.sandbox.after_round(token);
    }

    /// Once its batch is done: what the sandbox keeps between checks (Docker's volume for the
    /// home) is removed; a failure to is left to `docker volume prune`, not the batch's.
    pub(crate) fn release(self, ws: &Workspace) {
        // Only a sandbox that runs its own image keeps a volume (Docker's).
        if self.sandbox.sandbox.runs_host_programs() {
            return;
        }
        let Some(Ok(docker)) = crate::env::leftovers::docker_if_present() else {
            return;
        };
        let filter = crate::env::leftovers::task_filter(ws, &self.stand_in.slug);
        for volume in docker.managed_volumes(&filter).unwrap_or_default() {
            let _ = docker.remove_volume(&volume);
        }
    }
}
