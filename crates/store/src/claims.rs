//! Work under way that is not a round: a `start` between its checks and its task's record
//! (its worktree may be half made), and a `clean` removing a task's worktree and branch. Each
//! is recorded before anything is made or removed, with the lock file its command holds, so
//! that a command killed half way leaves a record saying what to settle, and so that a round
//! and a clean of one task exclude each other in the store's own transactions.

use crate::error::StoreError;
use crate::liveness::ClaimKey;
use std::path::PathBuf;

/// A start under way, recorded before its worktree is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingStart {
    pub slug: String,
    pub worktree: PathBuf,
    pub branch: String,
    /// The commit the branch starts at (a half-made branch still pointing here holds no work).
    pub base_commit: String,
    /// The starting command's claim, held while it lives.
    pub claim: ClaimKey,
    pub commander: String,
    pub started_at: i64,
}

/// A clean of one task under way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanClaim {
    pub task_id: i64,
    /// The cleaning command's claim, held while it lives.
    pub claim: ClaimKey,
    pub commander: String,
    pub started_at: i64,
}

/// The store's side of starts and cleans under way.
pub trait ClaimStore {
    /// Records a start under way: `SlugTaken` when the task exists, `StartPending` when
    /// another start of the slug is recorded (live or dead: the caller settles a dead one).
    fn begin_start(&mut self, start: &PendingStart) -> Result<(), StoreError>;

    /// Every start under way.
    fn pending_starts(&self) -> Result<Vec<PendingStart>, StoreError>;

    /// Forgets a start under way (one that failed, or was settled); false when it was not
    /// recorded (with that lock).
    fn end_start(&mut self, slug: &str, claim: &ClaimKey) -> Result<bool, StoreError>;

    /// Records, with a journal entry, that a clean of the task begins: `Busy` while a round
    /// of it runs, `BeingCleaned` when another clean is recorded (live or dead). No round of
    /// the task can begin until the claim ends.
    fn begin_clean(&mut self, claim: &CleanClaim) -> Result<(), StoreError>;

    /// The clean of the task under way, if any.
    fn cleaning(&self, task_id: i64) -> Result<Option<CleanClaim>, StoreError>;

    /// Ends a clean's claim (one that removed nothing, or a dead one being settled); false
    /// when it was not recorded (with that lock).
    fn end_clean(&mut self, task_id: i64, claim: &ClaimKey) -> Result<bool, StoreError>;
}
