//! Claude Code as an [`Adapter`]: the pieces of this folder and the shared stream-json reader
//! behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::capabilities::SessionFork;
use crate::claude::{command, version};
use crate::facts::{AgentFacts, Package};
use crate::stream_json::{self, Dialect, StreamJsonParser};
use crate::{AgentExit, Headless, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Claude Code (`@anthropic-ai/claude-code`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Claude;

/// Claude Code's static facts.
pub const FACTS: AgentFacts = AgentFacts {
    name: "claude",
    display_name: "Claude Code",
    program: "claude",
    package: Some(Package {
        npm: "@anthropic-ai/claude-code",
        tested_version: "2.1.332",
    }),
    version_args: &["--version"],
    // No model catalog: any name is passed through to the API.
    models_args: None,
    config_env: &[
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL",
        "ANTHROPIC_SMALL_FAST_MODEL",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CONFIG_DIR",
        "HOME",
    ],
    inherited_config_env: None,
    config_files: &[],
};

impl Adapter for Claude {
    fn mcp_registration(&self) -> Option<&'static dyn crate::mcp_registration::McpRegistration> {
        Some(&super::mcp_registration::Registration)
    }
    fn facts(&self) -> &'static AgentFacts {
        &FACTS
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        version::parse_version(stdout)
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(StreamJsonParser::new(Dialect::Claude))
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        stream_json::verdict(Dialect::Claude, summary, exit)
    }

    /// Claude prints its `result` line and may take a moment to exit.
    fn linger(&self) -> Option<Duration> {
        Some(Duration::from_secs(3))
    }

    fn headless(&self) -> Option<Headless> {
        Some(command::HEADLESS_OPTIONS)
    }

    /// Claude Code forks a session at a point while it runs the next prompt
    /// (`--resume-session-at UUID --fork-session`, verified with 2.1.197 and 2.1.332).
    fn session_fork(&self) -> Option<SessionFork> {
        Some(SessionFork::AtNextRound {
            point: super::fork::point,
        })
    }

    /// `$CLAUDE_CONFIG_DIR` (else `~/.claude`)`/projects/<the worktree, each character other
    /// than a letter or digit as '-'>/<session>.jsonl` (measured with 2.1.197).
    fn session_file(
        &self,
        env: &BTreeMap<String, String>,
        worktree: &Path,
        session: &str,
    ) -> Option<PathBuf> {
        if !crate::is_session_name(session) {
            return None;
        }
        let config = match env.get("CLAUDE_CONFIG_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => PathBuf::from(env.get("HOME")?).join(".claude"),
        };
        let project = crate::adapter::dashed(worktree);
        Some(
            config
                .join("projects")
                .join(project)
                .join(format!("{session}.jsonl")),
        )
    }

    /// One long-lived `claude -p --input-format stream-json` per task ([`super::warm`]).
    fn warm_plan(&self) -> Option<crate::WarmPlan> {
        Some(super::warm::warm_plan)
    }

    fn warm_by_default(&self) -> bool {
        true
    }
    fn warm_protocol(&self) -> crate::WarmProtocol {
        crate::WarmProtocol::StreamJsonControl
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }

    fn model_route(
        &self,
        env: &BTreeMap<String, String>,
        _config: Option<&serde_json::Value>,
        _model: Option<&str>,
    ) -> Option<crate::ModelRoute> {
        Some(crate::model_route::env_route(
            "anthropic",
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            env,
        ))
    }
}
