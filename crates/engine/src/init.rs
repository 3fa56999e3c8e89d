//! `ganger init`: makes `.ganger/` (kept out of git), writes a commented `ganger.toml` if there
//! is none, and reports which agent CLIs are installed and their versions.

use crate::config::{FILE_NAME, TEMPLATE};
use crate::error::{EngineError, Result};
use crate::install;
use crate::workspace::Workspace;
use ganger_sandbox::{AgentCommand, run_captured};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// The schema of `ganger init --json`.
pub const INIT_SCHEMA: &str = "ganger.init/1";

/// An agent CLI ganger knows of, supported yet or not.
#[derive(Debug, Clone, Copy)]
struct KnownCli {
    name: &'static str,
    program: &'static str,
    package: &'static str,
    tested: &'static str,
}

/// The agent CLIs `init` looks for. Those without an adapter yet are reported as such.
const KNOWN_CLIS: [KnownCli; 5] = [
    KnownCli {
        name: "opencode",
        program: "opencode",
        package: "opencode-ai",
        tested: "1.18.33",
    },
    KnownCli {
        name: "claude",
        program: "claude",
        package: "@anthropic-ai/claude-code",
        tested: "2.1.197",
    },
    KnownCli {
        name: "codex",
        program: "codex",
        package: "@openai/codex",
        tested: "0.171.0",
    },
    KnownCli {
        name: "gemini",
        program: "gemini",
        package: "@google/gemini-cli",
        tested: "0.61.0",
    },
    KnownCli {
        name: "qwen",
        program: "qwen",
        package: "@qwen-code/qwen-code",
        tested: "0.15.10",
    },
];

/// What `init` found of one agent CLI.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AgentFound {
    pub name: String,
    pub package: String,
    pub tested_version: String,
    /// Whether ganger can drive it yet.
    pub supported: bool,
    pub path: Option<PathBuf>,
    pub version: Option<String>,
}

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

fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn version_of(path: &std::path::Path) -> Option<String> {
    let captured = run_captured(
        &AgentCommand {
            program: path.to_path_buf(),
            args: vec!["--version".into()],
            env: std::env::vars_os().collect(),
            cwd: std::env::temp_dir(),
            stdin: None,
            token: format!("version-{}", std::process::id()),
            use_cgroup: false,
        },
        Duration::from_secs(30),
    )
    .ok()?;
    let text = String::from_utf8_lossy(&captured.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    // "2.1.197 (Claude Code)", "codex-cli 0.171.0", "1.18.33": keep the version number.
    line.split_whitespace()
        .find(|word| word.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// Runs `ganger init` on the workspace.
pub fn init(ws: &Workspace) -> Result<InitReport> {
    let created_state_dir = ws.ensure_state_dir()?;
    let config = ws.repo.main.join(FILE_NAME);
    let wrote_config = !config.exists();
    if wrote_config {
        std::fs::write(&config, TEMPLATE).map_err(|e| EngineError::io("write", &config, e))?;
    }
    let handles: Vec<_> = KNOWN_CLIS
        .iter()
        .map(|cli| {
            let cli = *cli;
            let supported = ganger_agents::adapter(cli.name);
            let configured = ws.config.agent(cli.name).command;
            std::thread::spawn(move || {
                let path = configured
                    .or_else(|| find(cli.program))
                    .or_else(|| supported.and_then(install::cached_program));
                let version = path.as_deref().and_then(version_of);
                AgentFound {
                    name: cli.name.into(),
                    package: cli.package.into(),
                    tested_version: supported.map_or(cli.tested, |a| a.tested_version()).into(),
                    supported: supported.is_some(),
                    path,
                    version,
                }
            })
        })
        .collect();
    let agents = handles.into_iter().filter_map(|h| h.join().ok()).collect();
    Ok(InitReport {
        schema: INIT_SCHEMA,
        state_dir: ws.state.root().to_path_buf(),
        created_state_dir,
        config,
        wrote_config,
        agents,
    })
}
