//! `ganger trees`: the pool of worktrees made ahead of time (docs/trees.md): what is ready,
//! filling it for a base, draining it.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use crate::evidence::task_worktree::base_commit;
use crate::evidence::tree_pool;
use serde::Serialize;

/// The ready worktrees of one base commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadyTrees {
    pub base: String,
    pub ready: usize,
}

/// The pool as a command leaves it (`ganger.trees/1`).
#[derive(Debug, Clone, Serialize)]
pub struct TreesReport {
    pub schema: &'static str,
    /// `[trees] pool`: how many ready worktrees are kept for the base.
    pub pool: usize,
    pub bases: Vec<ReadyTrees>,
    /// Worktrees this command checked out for the pool.
    pub made: usize,
    /// Pooled worktrees this command removed.
    pub removed: usize,
    /// Whether another filler was at work (asked to look again instead).
    pub busy: bool,
}

impl TreesReport {
    fn of(ws: &Workspace, filled: tree_pool::Filled) -> TreesReport {
        TreesReport {
            schema: "ganger.trees/1",
            pool: ws.config.trees.pool,
            bases: tree_pool::ready(ws)
                .into_iter()
                .map(|(base, ready)| ReadyTrees { base, ready })
                .collect(),
            made: filled.made,
            removed: filled.removed,
            busy: filled.busy,
        }
    }
}

/// The ready worktrees; nothing is changed.
pub fn list(ws: &Workspace) -> TreesReport {
    TreesReport::of(ws, tree_pool::Filled::default())
}

/// Fills the pool for `base` (else `[defaults] base`) up to `[trees] pool`.
pub fn fill(ws: &Workspace, base: Option<&str>) -> Result<TreesReport> {
    let base = base.map_or_else(|| ws.config.defaults.base.clone(), str::to_owned);
    let commit = base_commit(ws, &base)?;
    let filled = tree_pool::fill(ws, &commit)?;
    Ok(TreesReport::of(ws, filled))
}

/// Removes every pooled worktree.
pub fn drain(ws: &Workspace) -> Result<TreesReport> {
    let removed = tree_pool::drain(ws)?;
    Ok(TreesReport::of(
        ws,
        tree_pool::Filled {
            removed,
            ..Default::default()
        },
    ))
}
