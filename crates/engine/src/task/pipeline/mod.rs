//! The part of the role pipeline (`crate::ops::pipeline`) that the tasks' verbs and the other
//! operations share: its state and stages, the roles and their effort, the plan's steps, the
//! reviewers' verdicts, its report and the texts it trims.

pub(crate) mod effort;
pub mod plan_steps;
pub(crate) mod report;
pub mod roles;
pub(crate) mod state;
pub(crate) mod text;
pub mod verdict;
