//! `[trees]`: how a task's tree is made (docs/trees.md). Today one setting: a pool of worktrees
//! made ahead of time per base commit, which a start takes instead of checking one out.

use serde::Deserialize;

/// The most pooled worktrees a repository may keep for its base: each is a whole checkout on
/// disk.
pub const MOST_POOLED: usize = 32;

/// `[trees]`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreesConfig {
    /// How many ready worktrees to keep for the base tasks start from (0: none, every start
    /// runs `git worktree add`). A start takes one and the pool is refilled in the background.
    pub pool: usize,
}

impl TreesConfig {
    /// Why the settings cannot be, if they cannot.
    pub fn problem(&self) -> Option<String> {
        (self.pool > MOST_POOLED).then(|| {
            format!(
                "trees.pool: {} worktrees is more than the {MOST_POOLED} ganger keeps (each is a whole checkout on disk)",
                self.pool
            )
        })
    }
}
