//! `ganger init`: makes `.ganger/` (kept out of git), writes a commented `ganger.toml` if there
//! is none, and reports which agent CLIs are installed and their versions.

use crate::base::config::{FILE_NAME, template};
use crate::base::error::{EngineError, Result};
use crate::env::agents::AgentFound;
use crate::env::workspace::Workspace;
use serde::Serialize;
use std::path::PathBuf;

/// The schema of `ganger init --json`.
pub const INIT_SCHEMA: &str = "ganger.init/1";

/// What `init` did and found.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InitReport {
    pub schema: &'static str,
    pub state_dir: PathBuf,
    pub created_state_dir: bool,
    pub config: PathBuf,
    pub wrote_config: bool,
    pub agents: Vec<AgentFound>,
}

/// Runs `ganger init` on the workspace.
pub fn init(ws: &Workspace) -> Result<InitReport> {
    let created_state_dir = ws.ensure_state_dir()?;
    let config = ws.repo.main.join(FILE_NAME);
    let wrote_config = !config.exists();
    if wrote_config {
        std::fs::write(&config, template()).map_err(|e| EngineError::io("write", &config, e))?;
    }
    let agents = crate::env::agents::find_all(&ws.config);
    Ok(InitReport {
        schema: INIT_SCHEMA,
        state_dir: ws.state.root().to_path_buf(),
        created_state_dir,
        config,
        wrote_config,
        agents,
    })
}
