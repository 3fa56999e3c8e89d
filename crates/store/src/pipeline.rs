//! A pipeline's state (plan, critique, approval, steps, reviews) and the tasks of its roles:
//! what the store keeps for `ganger plan`, `approve`, `reject` and `status`. Apart from the
//! [`Store`](crate::Store) trait so that a backend without pipelines still compiles.

use crate::error::StoreError;
use crate::records::{NewRound, NewTask, Round, Task};
use serde::{Deserialize, Serialize};

/// A pipeline as stored: one per task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineRecord {
    pub task_id: i64,
    /// `planning`, `critiquing`, `awaiting-approval`, `executing`, `reviewing`, `done` or
    /// `failed` (the engine's `Stage`).
    pub stage: String,
    /// Why the pipeline failed or stopped.
    pub reason: Option<String>,
    /// The task's text, as given to `ganger plan`.
    pub brief: String,
    /// The plan's current version (1 for the first), its steps and how many are done.
    pub plan_version: u32,
    pub steps_total: u32,
    pub steps_done: u32,
    /// The review loop's current round (0 before the first review).
    pub review_round: u32,
    /// Each reviewer's last verdict, in the configured order.
    pub verdicts: Vec<ReviewerVerdict>,
    pub updated_at: i64,
}

/// A reviewer's last verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewerVerdict {
    /// The reviewer's role name (`code`, `tests`, ...).
    pub reviewer: String,
    /// `pass`, `fail`, or `pending` before its first review.
    pub verdict: String,
    /// The review round it was given in.
    pub round: u32,
    /// Its findings, `path:line: text`, and why an answer counted as a fail when it did not
    /// parse or the review round did not finish.
    pub findings: Vec<String>,
}

/// What a backend keeps for pipelines.
pub trait PipelineStore {
    /// Creates a task with no round yet (a pipeline's task: its rounds are its roles').
    fn create_bare_task(&mut self, task: &NewTask) -> Result<Task, StoreError>;

    /// Creates a role's task under `parent` and its first round, running, in one transaction.
    fn create_role_task(
        &mut self,
        parent: i64,
        role: &str,
        task: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError>;

    /// The tasks of a task's roles, oldest first.
    fn role_tasks(&self, parent: i64) -> Result<Vec<Task>, StoreError>;

    /// Every role task's slug with its parent's slug and its role, for `status --tree`.
    fn role_links(&self) -> Result<Vec<RoleLink>, StoreError>;

    /// The pipeline of a task, if it has one.
    fn pipeline(&self, task_id: i64) -> Result<Option<PipelineRecord>, StoreError>;

    /// Creates or replaces the pipeline of a task (`updated_at` is set to now).
    fn save_pipeline(&mut self, pipeline: &PipelineRecord) -> Result<(), StoreError>;
}

/// A role task and where it belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleLink {
    pub slug: String,
    pub parent: String,
    pub role: String,
}
