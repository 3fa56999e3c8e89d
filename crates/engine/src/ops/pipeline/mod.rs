//! The role pipeline (docs/pipeline.md): a planner writes a plan of numbered steps, a critic
//! reviews it, a person approves or rejects it; an executor then does the steps one round at
//! a time, and reviewers read the cumulative diff and answer with a verdict, their findings
//! going back to the executor until they all pass or a round limit is reached. Each role's
//! rounds are a task of their own (`SLUG.ROLE`, its own session) in the pipeline's worktree,
//! so every round is an ordinary round: reports, logs, cancel and the reaper work unchanged.

mod execute;
mod plan;
mod prompts;
mod role_round;

pub use crate::task::pipeline::report::{
    PIPELINE_SCHEMA, PipelineReport, PlanReport, RoleTask, pipeline_report,
};
pub use crate::task::pipeline::{plan_steps, roles, verdict};
pub use execute::approve;
pub use plan::{PlanOptions, plan, reject};
