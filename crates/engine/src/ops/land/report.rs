//! What `ganger land` is asked and what it reports: `ganger.land/1` (tasks queued, and the
//! batches a foreground lander ran) and `ganger.land-status/1` (the queue, the batch under
//! test with its bisection so far, flaky checks, what was sent back and why).

use crate::ops::land::checks::FailedCheck;
use serde::Serialize;

/// The schema of `ganger land`'s report.
pub const LAND_SCHEMA: &str = "ganger.land/1";
/// The schema of `ganger land status`.
pub const LAND_STATUS_SCHEMA: &str = "ganger.land-status/1";

/// The batch size when none is given.
pub const DEFAULT_BATCH: u32 = 8;

/// What `ganger land` was asked.
#[derive(Debug, Clone, Default)]
pub struct LandOptions {
    /// The tasks to queue (none: only run the lander).
    pub slugs: Vec<String>,
    /// Run the lander in the foreground (after queueing), until the queue is empty.
    pub run: bool,
    /// The most tasks a batch takes (`None`: 8).
    pub batch: Option<u32>,
    /// Queued ahead of lower priorities (0 by default).
    pub priority: i64,
    /// A task sent back goes to its worker as a fix round, and is queued again once it passes.
    pub fix: bool,
    pub commander: Option<String>,
}

/// A task put in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuedTask {
    pub task: String,
    pub base: String,
    /// The commit of its work that lands.
    pub commit: String,
    pub item: i64,
}

/// A task a batch sent back, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Returned {
    pub task: String,
    /// `conflict` or `culprit`.
    pub reason: String,
    /// The conflicting files (a conflict).
    pub files: Vec<String>,
    /// What it conflicts with: `base`, or the tasks ahead of it in the batch.
    pub with: Vec<String>,
    /// The checks that failed with it (a culprit), each with the end of its output.
    pub checks: Vec<FailedCheck>,
}

/// The fix round a task sent back was given (`--fix`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FixRound {
    pub task: String,
    /// The round, when it ran.
    pub round: Option<u32>,
    /// Whether it passed its checks with no conflict marker left.
    pub passed: bool,
    /// Whether the task was queued again.
    pub requeued: bool,
}

/// One check run of a batch: the tasks tested together (none: the base alone), and the
/// verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    pub tasks: Vec<String>,
    pub green: bool,
    pub failed: Vec<String>,
    pub flaky: Vec<String>,
}

/// What a lander did with one batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchReport {
    pub batch: i64,
    pub base: String,
    /// The base's head the batch was tested on.
    pub head: String,
    /// `landed`, `empty` (nothing could land), `moved` (the base moved under it: tested
    /// again) or `base-red` (the base's own checks fail).
    pub outcome: String,
    pub landed: Vec<String>,
    /// The base's new head, once landed.
    pub commit: Option<String>,
    pub returned: Vec<Returned>,
    /// How many times the checks ran on a combined tree (the base alone included).
    pub check_runs: u32,
    /// How many failing checks were run again to tell a flaky one.
    pub retries: u32,
    pub flaky: Vec<String>,
    pub probes: Vec<Probe>,
    /// The fix rounds of the tasks sent back (`--fix`).
    pub fix_rounds: Vec<FixRound>,
}

/// What `ganger land` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LandReport {
    pub schema: &'static str,
    pub queued: Vec<QueuedTask>,
    /// The batches a foreground lander (`--run`) ran.
    pub batches: Vec<BatchReport>,
}

/// An item of the queue, as `land status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueEntry {
    pub task: String,
    pub base: String,
    pub commit: String,
    /// `queued`, `testing`, `landed` or `returned`.
    pub state: String,
    pub priority: i64,
    pub queued_at: i64,
    pub batch: Option<i64>,
    pub reason: Option<String>,
}

/// A batch, as `land status` shows it: its progress is what its lander recorded so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchEntry {
    pub batch: i64,
    pub base: String,
    pub head: String,
    pub state: String,
    pub tip: Option<String>,
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub progress: serde_json::Value,
}

/// `ganger land status`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LandStatus {
    pub schema: &'static str,
    /// Open items, oldest first.
    pub queue: Vec<QueueEntry>,
    /// The batches under test now.
    pub testing: Vec<BatchEntry>,
    /// The last batches that ended, newest first.
    pub recent: Vec<BatchEntry>,
    /// The tasks sent back, newest last, with why.
    pub returned: Vec<QueueEntry>,
    /// Every check recorded flaky by the recent batches, once.
    pub flaky: Vec<String>,
}
