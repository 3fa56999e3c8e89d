//! The bwrap sandbox of a task: what to hide (homes, the main repository's `.git` and
//! `.ganger`, the other worktrees, the task's key files, the Docker socket) and what to
//! bind back (the worktree, the task's agent home, the agent's installation).

use crate::error::{EngineError, Result};
use crate::workspace::Workspace;
use ganger_sandbox::{AgentCommand, BwrapSpec, Network, installation_dirs, wrap_in_bwrap};
use ganger_store::Task;
use std::path::{Path, PathBuf};

/// bubblewrap's program, or a clear error when it is not installed.
pub(crate) fn program() -> Result<PathBuf> {
    crate::agent_env::find_executable(Path::new("bwrap")).ok_or_else(|| {
        EngineError::invalid(
            "--sandbox bwrap needs bubblewrap, which is not installed (apt-get install bubblewrap)",
        )
    })
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

/// `command` wrapped in bwrap for a round of `task`, whose agent home is `home`.
pub(crate) fn wrap(
    ws: &Workspace,
    task: &Task,
    command: AgentCommand,
    home: &Path,
    network: Network,
    writable: bool,
) -> Result<AgentCommand> {
    let bwrap = program()?;
    let (read_only, rw) = super::mount_paths(ws, task);
    let mut hide = vec![
        ws.repo.common_dir.clone(),
        ws.state.root().to_path_buf(),
        ws.repo.main.join(".git"),
    ];
    hide.extend(other_worktrees(ws, &task.worktree));
    if let Some(user_home) = std::env::var_os("HOME") {
        hide.push(PathBuf::from(user_home));
    }
    let spec = BwrapSpec {
        worktree: task.worktree.clone(),
        writable,
        read_only,
        rw,
        state: home.to_path_buf(),
        hide,
        expose: installation_dirs(&command.program),
        hide_files: task.keys.values().cloned().collect(),
        network,
    };
    Ok(wrap_in_bwrap(command, &spec, &bwrap))
}
