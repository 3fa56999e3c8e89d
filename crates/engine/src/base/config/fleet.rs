//! `[fleet]`: how the scheduler treats queued rounds of tasks whose work conflicts with
//! another's (the conflicts predicted at each round's end, docs/land.md).

use serde::Deserialize;

/// What the scheduler does with a queued round of a task that conflicts with a running one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConflictPolicy {
    /// Only report the conflict (`status`, the journal).
    #[default]
    Warn,
    /// Hold the round until the other task has landed (or is no longer running nor queued to
    /// land).
    Serialize,
}

/// `[fleet]`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FleetConfig {
    pub conflicts: ConflictPolicy,
}
