//! Task trees in tests (docs/trees.md, "Tests with trees on"): `GANGER_TEST_TREES` turns them
//! on for every test world, and what a test counts of the repository's worktrees leaves out
//! the ones the pool keeps ready.

use crate::World;

/// Runs every test with task trees on: its value, for example `max = 2` or `pool = 2`, is added
/// as a `[trees]` table to every `ganger.toml` a test writes that has none.
pub const TREES_ENV: &str = "GANGER_TEST_TREES";

/// The `[trees]` table's body the tests run with, when [`TREES_ENV`] is set.
pub(crate) fn trees_on() -> Option<String> {
    std::env::var(TREES_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// Whether the tests run with task trees on ([`TREES_ENV`] is set).
pub fn trees_are_on() -> bool {
    trees_on().is_some()
}

pub(crate) fn has_trees(toml: &str) -> bool {
    toml.lines().any(|line| line.trim() == "[trees]")
}

/// Whether a worktree at `path` is one the pool made and still keeps (ready, or being checked
/// out by its filler): a directory `ganger-pool-*` under `.ganger/trees/`. One a task took has
/// moved to the task's path and counts as the task's.
fn waits_in_pool(path: &str) -> bool {
    path.contains("/.ganger/trees/")
        && path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with("ganger-pool-"))
}

impl World {
    /// `git worktree list --porcelain` of the repository without the worktrees the pool keeps
    /// (with `[trees] pool = N` a filler makes them beside what the test's starts made): the
    /// main checkout and the tasks' worktrees, one block each, in git's order.
    pub fn worktrees(&self) -> String {
        let listed = self.git(&["worktree", "list", "--porcelain"]);
        listed
            .split("\n\n")
            .filter(|block| {
                !block
                    .lines()
                    .filter_map(|line| line.strip_prefix("worktree "))
                    .any(waits_in_pool)
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// How many worktrees the repository has, the main checkout included, without the pool's
    /// (see [`World::worktrees`]).
    pub fn worktree_count(&self) -> usize {
        self.worktrees()
            .lines()
            .filter(|line| line.starts_with("worktree "))
            .count()
    }
}
