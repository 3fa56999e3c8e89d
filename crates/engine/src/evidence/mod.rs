//! The repository and the evidence: task worktrees, half-made starts, overlaps and
//! conflicts,
//! budgets, checks, reports and resume notes.

pub mod budget;
pub(crate) mod checks;
pub(crate) mod conflicts;
pub(crate) mod half_made;
pub(crate) mod mounts;
pub(crate) mod overlap;
pub mod report;
pub(crate) mod resume_note;
pub(crate) mod task_worktree;
pub mod tree_cache;
pub(crate) mod tree_change;
pub(crate) mod tree_files;
pub(crate) mod tree_made;
pub(crate) mod tree_mounter;
pub(crate) mod tree_overlay;
pub mod tree_pool;
pub(crate) mod tree_reflink;
pub(crate) mod tree_seal;
pub(crate) mod tree_share;
pub(crate) mod tree_uppers;
pub(crate) mod worktree_lock;
