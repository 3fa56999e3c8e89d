//! `ganger trees`: the pool of worktrees made ahead of time and the tree cache (docs/trees.md):
//! what is ready and cached, filling both for a base, draining both.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use crate::evidence::task_worktree::base_commit;
use crate::evidence::{tree_cache, tree_pool};
use serde::Serialize;

/// The ready worktrees of one base commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadyTrees {
    pub base: String,
    pub ready: usize,
}

/// One base commit's cached tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CachedTree {
    pub base: String,
    /// The disk its files take.
    pub bytes: u64,
}

/// The pool and the cache as a command leaves them (`ganger.trees/1`).
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
    /// `[trees] max`: how many base commits the tree cache keeps (0: no cache).
    pub max: usize,
    /// `[trees] disk` in bytes, if set.
    pub disk: Option<u64>,
    /// The cached trees, least recently used first.
    pub cached: Vec<CachedTree>,
    /// Cached trees this command checked out (a missing or modified one).
    pub cached_made: usize,
    /// Cached trees this command removed (modified, over the limits, or drained).
    pub cached_removed: usize,
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
            max: ws.config.trees.max,
            disk: ws.config.trees.disk_bytes().ok().flatten(),
            cached: tree_cache::cached(ws)
                .into_iter()
                .map(|c| CachedTree {
                    base: c.base,
                    bytes: c.bytes,
                })
                .collect(),
            cached_made: 0,
            cached_removed: 0,
        }
    }
}

/// The ready worktrees; nothing is changed.
pub fn list(ws: &Workspace) -> TreesReport {
    TreesReport::of(ws, tree_pool::Filled::default())
}

/// Fills the pool for `base` (else `[defaults] base`) up to `[trees] pool`, and with the tree
/// cache on, checks out its cached tree (again, when someone modified it).
pub fn fill(ws: &Workspace, base: Option<&str>) -> Result<TreesReport> {
    let base = base.map_or_else(|| ws.config.defaults.base.clone(), str::to_owned);
    let commit = base_commit(ws, &base)?;
    let cached = if ws.config.trees.max > 0 {
        tree_cache::refresh(ws, &commit)?
    } else {
        tree_cache::Made::default()
    };
    let filled = tree_pool::fill(ws, &commit)?;
    let mut report = TreesReport::of(ws, filled);
    report.cached_made = usize::from(cached.made);
    report.cached_removed = cached.removed;
    Ok(report)
}

/// Removes every pooled worktree and cached tree.
pub fn drain(ws: &Workspace) -> Result<TreesReport> {
    let removed = tree_pool::drain(ws)?;
    let cached_removed = tree_cache::drain(ws)?;
    let mut report = TreesReport::of(
        ws,
        tree_pool::Filled {
            removed,
            ..Default::default()
        },
    );
    report.cached_removed = cached_removed;
    Ok(report)
}
