//! The library ganger's front ends drive (the CLI now; a daemon, an MCP server and remote
//! workers later): tasks and rounds, the round host, reports, and the reaper that settles
//! rounds whose host died. It prints nothing: commands return values and report their steps
//! as [`Notice`]s.

mod api;
mod base;
mod env;
mod evidence;
mod ops;
mod round;
mod task;

// The modules front ends name by path (`ganger_engine::fleet::...`).
pub use crate::api::documents;
pub use crate::api::metrics;
pub use crate::api::models as api_models;
pub use crate::base::clean_report;
pub use crate::base::config;
pub use crate::base::install;
pub use crate::base::scripted;
pub use crate::env::agents;
pub use crate::env::image;
pub use crate::env::store_location;
pub use crate::evidence::budget;
pub use crate::evidence::report;
pub use crate::ops::fleet;
pub use crate::ops::journal;
pub use crate::ops::pipeline;
pub use crate::ops::race;
pub use crate::ops::trees;
pub use crate::round::warm;
pub use crate::task::labels;

pub use crate::api::diff_stream::{DiffPage, DiffStream};
pub use crate::api::documents::ErrorDocument;
pub use crate::api::feed::{BoardTask, RoundFeed, StreamLine, StreamRead};
pub use crate::api::history::{RoundHistory, RoundPoint};
pub use crate::api::warm::WarmAgent;
pub use crate::api::{Engine, Sent, StatusRequest};
pub use crate::base::brief::{Brief, MAX_PROMPT, read_brief};
pub use crate::base::clean_report::CleanReport;
pub use crate::base::commander::{check_commander_name, commander};
pub use crate::base::error::{EngineError, ErrorKind, Result};
pub use crate::base::notice::{Notice, Notices, TreeMade};
pub use crate::env::agents::AgentFound;
pub use crate::env::models::{ModelCheck, closest};
pub use crate::env::store_location::{STORE_ENV, StoreLocation};
pub use crate::env::workspace::Workspace;
pub use crate::evidence::half_made::KilledStart;
pub use crate::evidence::overlap::Overlap;
pub use crate::evidence::report::{RoundReport, TaskList, round_report};
pub use crate::ops::adopt::{AdoptOptions, adopt};
pub use crate::ops::attach::attach;
pub use crate::ops::clean::{CleanOptions, clean};
pub use crate::ops::diff::diff;
pub use crate::ops::host_entry::run_detached_host;
pub use crate::ops::init::{InitReport, init};
pub use crate::ops::land::{
    BatchEntry, BatchReport, FailedCheck as LandFailedCheck, FixRound, LAND_SCHEMA,
    LAND_STATUS_SCHEMA, LandOptions, LandReport, LandStatus, Probe, QueueEntry, QueuedTask,
    Returned,
};
pub use crate::ops::log::{LogLine, LogOptions, log};
pub use crate::ops::merge::commit::MergeMode;
pub use crate::ops::merge::{MergeOptions, MergeOutcome, MergeReport, merge};
pub use crate::ops::ownership::{OwnershipAction, OwnershipReport, change_ownership};
pub use crate::ops::pipeline::{PipelineReport, PlanOptions, approve, plan, reject};
pub use crate::ops::rewind::{RewindOptions, RewindReport, rewind};
pub use crate::ops::status::{StatusView, status, status_of};
pub use crate::ops::wait::{WaitOutcome, wait};
pub use crate::round::HostOutcome;
pub use crate::round::launch::Launched;
pub use crate::round::reaper::settle_running;
pub use crate::task::admission::UNTIL_GREEN_MAX;
pub use crate::task::cancel::cancel;
pub use crate::task::fix::{FixOptions, fix};
pub use crate::task::rules::{Inbound, holds_rounds};
pub use crate::task::start::{StartOptions, start};
pub use ganger_docker::run_docker_round;
pub use ganger_sandbox::run_relay as run_gateway_relay;
pub use ganger_sandbox::{Network, SandboxKind};
pub use ganger_store::{Budget, ConflictFile, HandedClaim, PredictedConflict};
