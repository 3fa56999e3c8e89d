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

/// `ganger.agents-install/1`.
#[derive(Debug, Clone, Serialize)]
pub struct AgentsInstall {
    pub schema: &'static str,
    pub installed: Vec<InstalledAgent>,
}

impl AgentsInstall {
    pub fn new(installed: Vec<InstalledAgent>) -> AgentsInstall {
        AgentsInstall {
            schema: "ganger.agents-install/1",
            installed,
        }
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

/// `ganger.doctor/1`.
#[derive(Debug, Clone, Serialize)]
pub struct Doctor {
    pub schema: &'static str,
    pub agents: Vec<AgentCheck>,
}

impl Doctor {
    pub fn new(agents: Vec<AgentCheck>) -> Doctor {
        Doctor {
            schema: "ganger.doctor/1",
            agents,
        }
    }
}

/// `ganger.image-build/1`.
#[derive(Debug, Clone, Serialize)]
pub struct ImageBuild {
    pub schema: &'static str,
    pub images: Vec<Built>,
}

impl ImageBuild {
    pub fn new(images: Vec<Built>) -> ImageBuild {
        ImageBuild {
            schema: "ganger.image-build/1",
            images,
        }
    }
}

/// `ganger.images/1`.
#[derive(Debug, Clone, Serialize)]
pub struct Images {
    pub schema: &'static str,
    pub images: Vec<ImageEntry>,
}

impl Images {
    pub fn new(images: Vec<ImageEntry>) -> Images {
        Images {
            schema: "ganger.images/1",
            images,
        }
    }
}

/// `ganger.warm/1`: the warm agents, least recently used first.
#[derive(Debug, Clone, Serialize)]
pub struct WarmList {
    pub schema: &'static str,
    pub agents: Vec<WarmAgent>,
    /// `[warm] memory`, or its default (a quarter of the machine's memory), in bytes.
    pub memory_limit_bytes: Option<u64>,
}

impl WarmList {
    pub fn new(agents: Vec<WarmAgent>, memory_limit_bytes: Option<u64>) -> WarmList {
        WarmList {
            schema: "ganger.warm/1",
            agents,
            memory_limit_bytes,
        }
    }
}

/// `ganger.warm-stop/1`: the tasks whose warm agent was stopped.
#[derive(Debug, Clone, Serialize)]
pub struct WarmStop {
    pub schema: &'static str,
    pub stopped: Vec<String>,
}

impl WarmStop {
    pub fn new(stopped: Vec<String>) -> WarmStop {
        WarmStop {
            schema: "ganger.warm-stop/1",
            stopped,
        }
    }
}

/// `ganger.summary/1`: a stream file's summary.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub schema: &'static str,
    pub bytes: u64,
    pub summary: RoundSummary,
}

impl Summary {
    pub fn new(bytes: u64, summary: RoundSummary) -> Summary {
        Summary {
            schema: "ganger.summary/1",
            bytes,
            summary,
        }
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

/// A file `init --supervisor` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    pub path: PathBuf,
    /// `created`, `updated` or `unchanged`.
    pub change: &'static str,
    pub what: &'static str,
}

/// `ganger.init-supervisor/1`: what `init --supervisor` wrote, beside the repository's own
/// `init` report.
#[derive(Debug, Clone, Serialize)]
pub struct InitSupervisor {
    pub schema: &'static str,
    pub init: InitReport,
    pub supervisor: String,
    pub command: String,
    /// Why the supervisor may not find `ganger` on its `PATH` (it is not there, or another
    /// program is), `None` when this program is what it finds.
    pub path_note: Option<String>,
    pub files: Vec<FileChange>,
}

impl InitSupervisor {
    pub fn new(
        init: InitReport,
        supervisor: &str,
        command: &str,
        path_note: Option<String>,
        files: Vec<FileChange>,
    ) -> InitSupervisor {
        InitSupervisor {
            schema: "ganger.init-supervisor/1",
            init,
            supervisor: supervisor.to_owned(),
            command: command.to_owned(),
            path_note,
            files,
        }
    }
}
