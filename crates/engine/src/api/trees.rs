//! The engine's calls for the pool of worktrees made ahead of time (docs/trees.md).

use crate::api::Engine;
use crate::base::error::Result;
use crate::ops::trees::{self, TreesReport};

impl Engine {
    /// The ready pooled worktrees, by base.
    pub fn trees(&self) -> TreesReport {
        trees::list(self.workspace())
    }

    /// Fills the pool for `base` (else the configured base) up to `[trees] pool`.
    pub fn fill_trees(&self, base: Option<&str>) -> Result<TreesReport> {
        trees::fill(self.workspace(), base)
    }

    /// Makes task `slug`'s tree a plain worktree at `path` (`ganger checkout`).
    pub fn checkout(
        &self,
        slug: &str,
        path: Option<&std::path::Path>,
    ) -> Result<crate::ops::checkout::CheckoutReport> {
        crate::ops::checkout::checkout(self.workspace(), slug, path)
    }

    /// Removes every pooled worktree.
    pub fn drain_trees(&self) -> Result<TreesReport> {
        trees::drain(self.workspace())
    }
}
