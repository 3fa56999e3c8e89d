//! The merge queue's records (`ganger land`): the tasks queued to land on their base branch and
//! the batches a lander tests. Apart from the [`Store`](crate::Store) trait, as pipelines are.
//!
//! An item goes `queued` → `testing` (taken into a batch) → `landed` or `returned` (sent back:
//! it conflicts, or it is a culprit). A batch goes `testing` → `landing` (its new tip recorded,
//! before the base moves) → `landed`, or ends `abandoned` (its lander died before the base
//! moved, or the base moved under it: its open items are queued again) or `empty` (nothing
//! in it could land). Whoever holds the base's lander claim settles what a dead lander left:
//! a `landing` batch whose tip the base has is landed, any other open batch is abandoned.

use crate::error::StoreError;
use crate::liveness::ClaimKey;
use serde::{Deserialize, Serialize};

/// An item of the merge queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandItem {
    pub id: i64,
    pub task_id: i64,
    pub slug: String,
    pub base: String,
    /// The commit of the task's work that lands (its branch's tip when it was queued).
    pub task_commit: String,
    pub commander: String,
    pub priority: i64,
    /// Sent back, the task gets a fix round and is queued again once it passes.
    pub fix: bool,
    pub queued_at: i64,
    /// `queued`, `testing`, `landed` or `returned`.
    pub state: String,
    pub batch: Option<i64>,
    /// Why it was returned (a conflict, the failing check).
    pub reason: Option<String>,
    pub ended_at: Option<i64>,
}

/// What a task is queued with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLandItem {
    pub task_id: i64,
    pub base: String,
    pub task_commit: String,
    pub commander: String,
    pub priority: i64,
    pub fix: bool,
}

/// A batch a lander took from the queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LandBatch {
    pub id: i64,
    pub base: String,
    /// The base's head the batch was first tested on.
    pub head: String,
    /// The commit the base moves to, recorded before it moves.
    pub tip: Option<String>,
    /// `testing`, `landing`, `landed`, `abandoned` or `empty`.
    pub state: String,
    /// The claim of the lander that took it.
    pub lander: ClaimKey,
    /// What the lander has found so far (check runs, probes, culprits, flaky checks), as the
    /// engine writes it.
    pub progress: serde_json::Value,
    pub started_at: i64,
    pub ended_at: Option<i64>,
}

/// What a backend keeps for the merge queue.
pub trait LandStore {
    /// Queues a task to land; `None` when the task has an item queued or under test already.
    fn land_enqueue(&mut self, item: &NewLandItem) -> Result<Option<LandItem>, StoreError>;

    /// The items, oldest first: the open ones (queued or testing) with `open`, else every one.
    fn land_items(&self, open: bool) -> Result<Vec<LandItem>, StoreError>;

    /// The bases with items queued or under test.
    fn land_bases(&self) -> Result<Vec<String>, StoreError>;

    /// Takes a batch of up to `limit` queued items of `base` (highest priority first, then
    /// oldest) into a new batch tested on `head` by `lander`, in one transaction; `None`
    /// when nothing of `base` is queued. A batch's tasks share one sandbox kind and network,
    /// the first item's: the others are left queued for a later batch.
    fn land_take_batch(
        &mut self,
        base: &str,
        head: &str,
        lander: &ClaimKey,
        limit: u32,
    ) -> Result<Option<(LandBatch, Vec<LandItem>)>, StoreError>;

    /// Records what the lander found so far in a batch under test.
    fn land_progress(&mut self, batch: i64, progress: &serde_json::Value)
    -> Result<(), StoreError>;

    /// Journals a step of a batch (`LandStep`), by `commander`.
    fn land_step(&mut self, commander: &str, detail: serde_json::Value) -> Result<(), StoreError>;

    /// Sends an item under test back (`reason`), journaled with `detail`.
    fn land_return(
        &mut self,
        item: i64,
        reason: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError>;

    /// Records an item under test as landed already (the base has its commit: a lander that
    /// lost its claim moved the base after another settled its batch), journaled.
    fn land_already(&mut self, item: i64) -> Result<(), StoreError>;

    /// Records the commit the base is about to move to: the batch is `landing`.
    fn land_landing(&mut self, batch: i64, tip: &str) -> Result<(), StoreError>;

    /// Ends a batch: with `landed`, it and its items under test are landed (journaled per
    /// task); without, it is abandoned (or `empty` when no item is left under test) and its
    /// items under test are queued again. False when the batch was not open.
    fn land_finish(&mut self, batch: i64, landed: bool) -> Result<bool, StoreError>;

    /// The batches of `base` still open (`testing` or `landing`), oldest first.
    fn land_open_batches(&self, base: &str) -> Result<Vec<LandBatch>, StoreError>;

    /// The last `limit` batches, newest first.
    fn land_batches(&self, limit: u32) -> Result<Vec<LandBatch>, StoreError>;
}
