//! What a round host needs to run a round, and the worktree's state before it: the base
//! commit for the first round in a worktree ganger just made (its index is the base), else a
//! snapshot taken now, so that a person's edits between rounds are never counted as the
//! worker's.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_agents::Adapter;
use ganger_git::{IndexEntry, Repo};
use ganger_store::{Round, Task};
use std::fs::File;
use std::time::Duration;

/// Everything a host is given to run one round.
#[derive(Debug, Clone)]
pub struct RoundInput {
    pub task: Task,
    pub round: Round,
    /// The prompt exactly as it must reach the agent.
    pub prompt: String,
    pub timeout: Duration,
    pub stall: Duration,
    pub grace: Duration,
}

impl RoundInput {
    /// The input of `round` of `task`, with the task's limits or the configured defaults.
    pub fn new(
        ws: &crate::env::workspace::Workspace,
        task: Task,
        round: Round,
        prompt: String,
    ) -> RoundInput {
        let defaults = &ws.config.defaults;
        RoundInput {
            timeout: task
                .timeout_ms
                .map_or(defaults.timeout.0, Duration::from_millis),
            stall: task
                .stall_ms
                .map_or(defaults.stall.0, Duration::from_millis),
            grace: defaults.grace.0,
            task,
            round,
            prompt,
        }
    }
}

/// The worktree before a round: the snapshot commit and its file listing.
#[derive(Debug, Clone, Default)]
pub struct BeforeState {
    pub commit: Option<String>,
    pub entries: Option<Vec<IndexEntry>>,
}

/// Takes the worktree's state before round `number` of `task` (its worktree opened as
/// `worktree`).
pub fn before_state(
    ws: &Workspace,
    task: &Task,
    worktree: &Repo,
    number: u32,
    fresh: bool,
) -> Result<BeforeState> {
    let task_slug = &task.slug;
    if fresh {
        // A worktree made for this round: its index is exactly its base commit.
        return Ok(BeforeState {
            commit: worktree.head()?,
            entries: worktree.index_entries(),
        });
    }
    let name = format!("refs/ganger/{task_slug}/before-{number}");
    let snapshot = crate::evidence::tree_change::snapshot(
        ws,
        &task.worktree,
        worktree,
        Some(&name),
        &format!("ganger: {task_slug} before round {number}"),
    )?;
    Ok(BeforeState {
        commit: Some(snapshot.commit),
        entries: snapshot.entries,
    })
}

pub(super) fn adapter_of(ws: &Workspace, task: &Task) -> Result<&'static dyn Adapter> {
    crate::env::agent_env::adapter_for(&task.agent, &ws.config).ok_or_else(|| {
        EngineError::invalid(format!(
            "unknown agent {:?} for task {}",
            task.agent, task.slug
        ))
    })
}

pub(super) fn create(path: &std::path::Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    }
    File::create(path).map_err(|e| EngineError::io("create", path, e))
}
