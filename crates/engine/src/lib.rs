//! The library ganger's front ends drive (the CLI now; a daemon, an MCP server and remote
//! workers later): tasks and rounds, the round host, reports, and the reaper that settles
//! rounds whose host died. It prints nothing: commands return values and report their steps
//! as [`Notice`]s.

mod agent_env;
pub mod agents;
mod brief;
mod cancel;
mod checks;
mod clean;
mod clean_git;
pub mod clean_report;
mod commander;
pub mod config;
mod diff;
mod error;
mod fix;
mod host_entry;
pub mod image;
mod init;
pub mod install;
mod keys;
mod launch;
mod leftovers;
mod log;
mod models;
mod notice;
pub mod pipeline;
mod reaper;
mod redact;
pub mod report;
mod round;
mod sandboxing;
pub mod scripted;
mod slug;
mod start;
mod status;
mod until_green;
mod wait;
mod workspace;

pub use agents::AgentFound;
pub use brief::{Brief, MAX_PROMPT};
pub use cancel::cancel;
pub use clean::{CleanOptions, clean};
pub use clean_report::CleanReport;
pub use commander::commander;
pub use diff::diff;
pub use error::{EngineError, ErrorKind, Result};
pub use fix::{FixOptions, fix};
pub use ganger_sandbox::{Network, SandboxKind};
pub use host_entry::run_detached_host;
pub use init::{InitReport, init};
pub use launch::Launched;
pub use log::{LogLine, LogOptions, log};
pub use models::{ModelCheck, closest};
pub use notice::{Notice, Notices};
pub use pipeline::{PipelineReport, PlanOptions, approve, plan, reject};
pub use reaper::settle_running;
pub use report::{RoundReport, TaskList, round_report};
pub use round::HostOutcome;
pub use sandboxing::run_docker_round;
pub use start::{StartOptions, start};
pub use status::{StatusView, status, status_of};
pub use until_green::UNTIL_GREEN_MAX;
pub use wait::{WaitOutcome, wait};
pub use workspace::Workspace;
