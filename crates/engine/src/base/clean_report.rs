//! What `ganger clean` reports (`ganger.clean/1`, docs/json.md): per task, what was removed
//! and what was kept and why, or why the task was skipped altogether.

use serde::Serialize;

/// The schema name of the clean report.
pub const CLEAN_SCHEMA: &str = "ganger.clean/1";

/// What a leftover is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeftoverKind {
    /// Processes of a round, still running after it ended.
    Processes,
    Container,
    Volume,
    Worktree,
    Branch,
    /// The agent's home of a sandboxed task (`.ganger/tasks/SLUG/agent`).
    AgentHome,
}

impl LeftoverKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LeftoverKind::Processes => "processes",
            LeftoverKind::Container => "container",
            LeftoverKind::Volume => "volume",
            LeftoverKind::Worktree => "worktree",
            LeftoverKind::Branch => "branch",
            LeftoverKind::AgentHome => "agent-home",
        }
    }
}

/// One thing removed (or, with `--dry-run`, that would be).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removed {
    pub kind: LeftoverKind,
    /// The worktree's path, the branch, the container or volume name, or `round N`.
    pub name: String,
    /// What else went with it: `2 processes`, `3 uncommitted changes`, `1 commit not in main`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One thing kept, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    pub kind: LeftoverKind,
    pub name: String,
    pub reason: String,
}

/// What clean did for one task.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskCleanup {
    pub task: String,
    /// Why nothing of the task was touched (a round still runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub removed: Vec<Removed>,
    pub kept: Vec<Kept>,
}

impl TaskCleanup {
    pub(crate) fn new(slug: &str) -> TaskCleanup {
        TaskCleanup {
            task: slug.to_owned(),
            ..TaskCleanup::default()
        }
    }

    pub(crate) fn removed(&mut self, kind: LeftoverKind, name: String, detail: Option<String>) {
        self.removed.push(Removed { kind, name, detail });
    }

    pub(crate) fn kept(&mut self, kind: LeftoverKind, name: String, reason: String) {
        self.kept.push(Kept { kind, name, reason });
    }

    /// Whether there was nothing left to remove or keep.
    pub fn is_empty(&self) -> bool {
        self.skipped.is_none() && self.removed.is_empty() && self.kept.is_empty()
    }
}

/// The whole clean report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CleanReport {
    pub schema: &'static str,
    /// Nothing was changed: `removed` lists what would have been.
    pub dry_run: bool,
    pub force: bool,
    /// Why Docker's leftovers were not looked at though its socket exists; absent when they
    /// were, or when there is no Docker socket at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docker: Option<String>,
    /// Starts killed before their task was recorded, whose half-made worktrees and branches
    /// were settled: a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settled: Vec<String>,
    /// Agents' private temporary directories (`TMPDIR`) that hosts killed outright left,
    /// removed: any repository's, this user's (their hosts are dead, whatever they ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub temporary_dirs: Vec<std::path::PathBuf>,
    pub tasks: Vec<TaskCleanup>,
}

/// `n thing` or `n things`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
