//! Conflicts predicted while tasks run: pairs of open tasks on one base (or a task and its
//! base's head) whose work conflicts when merged, with the files and lines. Replaced at each
//! round's end of a task of the pair; a pair is journaled once when it appears (`conflict`)
//! and once when it is gone (`conflict-cleared`).

use crate::error::StoreError;
use serde::{Deserialize, Serialize};

/// A file in conflict, and the lines of its conflicting hunks in the merged file (first and
/// last, 1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictFile {
    pub path: String,
    pub lines: Vec<[u32; 2]>,
}

/// Two tasks whose work conflicts (`task` before `other` in slug order), or a task and its
/// base's head (`with_base`, `other` the base's name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictedConflict {
    pub task: String,
    pub other: String,
    pub with_base: bool,
    pub files: Vec<ConflictFile>,
}

/// An open task's work as its last ended round left it: what a round's end merges with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSnapshot {
    pub slug: String,
    /// The round's uncommitted changes (`"M path"` style).
    pub changes: Vec<String>,
    /// The round's snapshot commit.
    pub snapshot: String,
}

/// What a backend keeps of predicted conflicts.
pub trait ConflictStore {
    /// Replaces what is known of the conflicts of task `slug` (its id `task_id`; the round whose
    /// end found them, `round`) by `found`,
    /// each of which names it: a pair not known before is journaled `conflict` on the task, a
    /// known pair not in `found` is dropped and journaled `conflict-cleared`.
    fn record_conflicts(
        &mut self,
        task_id: i64,
        slug: &str,
        round: Option<u32>,
        commander: Option<&str>,
        found: &[PredictedConflict],
    ) -> Result<(), StoreError>;

    /// The other open tasks on `base` (not `except_task`, not cleaned, not merged since,
    /// not a pipeline's role) whose last ended round left changes and a snapshot, by slug: one
    /// read for all of them, however many there are.
    fn open_snapshots(&self, except_task: i64, base: &str)
    -> Result<Vec<OpenSnapshot>, StoreError>;

    /// Every pair known to conflict, in order.
    fn conflicts(&self) -> Result<Vec<PredictedConflict>, StoreError>;
}
