//! The documents of commands about this machine and its tools rather than tasks:
//! `ganger.agents-install/1`, `ganger.doctor/1`, `ganger.image-build/1`, `ganger.images/1`,
//! `ganger.warm/1`, `ganger.warm-stop/1`, `ganger.summary/1`, `ganger.adopted/1` and
//! `ganger.init-supervisor/1`.

use crate::api::warm::WarmAgent;
use crate::env::image::{Built, ImageEntry};
use crate::ops::init::InitReport;
use ganger_events::RoundSummary;
use serde::Serialize;
use std::path::PathBuf;

/// One agent CLI installed into ganger's cache.
#[derive(Debug, Clone, Serialize)]
pub struct InstalledAgent {
    pub name: String,
    pub package: String,
    pub version: String,
    pub path: PathBuf,
}

document! {
    /// `ganger.agents-install/1`.
    AgentsInstall("ganger.agents-install/1") {
        installed: Vec<InstalledAgent>,
    }
}

/// What `agents doctor` found of one agent.
#[derive(Debug, Clone, Serialize)]
pub struct AgentCheck {
    pub name: String,
    pub version: Option<String>,
    /// `ok`, `failed`, or `not-installed`.
    pub result: &'static str,
    /// What failed, in one sentence; `None` when it works.
    pub problem: Option<String>,
    pub seconds: f64,
}

document! {
    /// `ganger.doctor/1`.
    Doctor("ganger.doctor/1") {
        agents: Vec<AgentCheck>,
    }
}

document! {
    /// `ganger.image-build/1`.
    ImageBuild("ganger.image-build/1") {
        images: Vec<Built>,
    }
}

document! {
    /// `ganger.images/1`.
    Images("ganger.images/1") {
        images: Vec<ImageEntry>,
    }
}

document! {
    /// `ganger.warm/1`: the warm agents, least recently used first.
    WarmList("ganger.warm/1") {
        agents: Vec<WarmAgent>,
        /// `[warm] memory`, or its default (a quarter of the machine's memory), in bytes.
        memory_limit_bytes: Option<u64>,
    }
}

document! {
    /// `ganger.warm-stop/1`: the tasks whose warm agent was stopped.
    WarmStop("ganger.warm-stop/1") {
        stopped: Vec<String>,
    }
}

document! {
    /// `ganger.summary/1`: a stream file's summary.
    Summary("ganger.summary/1") {
        bytes: u64,
        summary: RoundSummary,
    }
}

/// `ganger.adopted/1`: the task made for a session started by hand.
#[derive(Debug, Clone, Serialize)]
pub struct Adopted {
    pub schema: &'static str,
    pub task: String,
    pub agent: String,
    pub session: Option<String>,
    pub worktree: PathBuf,
    pub branch: String,
    pub owner: String,
}

impl Adopted {
    pub fn of(task: &ganger_store::Task) -> Adopted {
        Adopted {
            schema: "ganger.adopted/1",
            task: task.slug.clone(),
            agent: task.agent.clone(),
            session: task.session.clone(),
            worktree: task.worktree.clone(),
            branch: task.branch.clone(),
            owner: task.owner.clone(),
        }
    }
}

/// A file `init --supervisor` wrote (the agent's registration says what it writes).
pub use ganger_agents::mcp_registration::FileChange;

document! {
    /// `ganger.init-supervisor/1`: what `init --supervisor` wrote, beside the repository's own
    /// `init` report.
    InitSupervisor("ganger.init-supervisor/1") {
        init: InitReport,
        supervisor: String,
        command: String,
        /// Why the supervisor may not find `ganger` on its `PATH` (it is not there, or another
        /// program is), `None` when this program is what it finds.
        path_note: Option<String>,
        files: Vec<FileChange>,
    }
}
