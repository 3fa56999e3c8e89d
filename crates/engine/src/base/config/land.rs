//! `[land]`: what a batch lands as on its base (docs/land.md).

use serde::Deserialize;

/// The commits a green batch puts on its base.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LandMode {
    /// One merge commit of the tested tree, with the old head and each task as parents.
    #[default]
    Merge,
    /// One commit per task in queue order, a line with no merge, each with the tree of the
    /// batch up to that task, each one's checks passed.
    Rebase,
}

/// `[land]`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LandConfig {
    pub mode: LandMode,
}
