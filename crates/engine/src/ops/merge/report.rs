//! What a merge is asked and what it reports (`ganger.merge/1`), and what it has checked
//! before it changes anything: shared by the merge and its `--fix` resolution.

use crate::base::commander::commander;
use crate::ops::merge::commit::MergeMode;
use ganger_git::Repo;
use ganger_store::{Round, Task};
use serde::Serialize;

/// The schema of a merge's report.
pub const MERGE_SCHEMA: &str = "ganger.merge/1";

/// What `ganger merge` was asked.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    pub slug: String,
    pub mode: MergeMode,
    /// On a conflict, have the task's worker resolve it.
    pub fix: bool,
    pub commander: Option<String>,
}

/// How a merge ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeOutcome {
    /// The base branch has the task's work.
    Merged,
    /// The merge conflicts; nothing was merged.
    Conflict,
    /// `--fix` ran a round, and conflicts remain (or the round did not finish); nothing was
    /// merged, the worktree is left mid-merge for another `fix` and `merge`.
    Unresolved,
}

/// What a merge did.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MergeReport {
    pub schema: &'static str,
    pub task: String,
    pub mode: MergeMode,
    pub outcome: MergeOutcome,
    pub base: String,
    pub branch: String,
    /// The rounds whose work this is (rewound rounds left out).
    pub rounds: Vec<u32>,
    /// The commit of the task's final state on its branch, when there was anything to commit.
    pub task_commit: Option<String>,
    /// The merge commit on the task's branch that resolved a conflict (`--fix`).
    pub resolution_commit: Option<String>,
    /// The base's new tip, once merged.
    pub commit: Option<String>,
    /// The files in conflict (on a conflict, or left unresolved).
    pub conflicts: Vec<String>,
    /// The round `--fix` ran to resolve a conflict, and why it did not resolve it.
    pub fix_round: Option<u32>,
    pub reason: Option<String>,
}

/// Everything checked before a merge changes anything.
pub(crate) struct Ready {
    pub task: Task,
    pub kept: Vec<Round>,
    pub worktree: Repo,
    pub main: Repo,
    /// The task as the user named it (a pipeline's task, whose work is its executor's).
    pub name: String,
    pub base_ref: String,
    /// The message of the task's own commit (and of a squashed merge).
    pub message: String,
}

/// The commander a merge's rounds and records name.
pub(crate) fn merge_commander(options: &MergeOptions) -> String {
    commander(options.commander.as_deref())
}
