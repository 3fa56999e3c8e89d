//! Codex as an [`Adapter`]: the pieces of this folder behind the contract the engine uses.

use crate::adapter::{
    Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint, WarmPlan, WarmProtocol,
};
use crate::codex::{CodexStream, command, models};
use crate::facts::{AgentFacts, Package};
use crate::{AgentExit, Headless, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Codex CLI (`@openai/codex`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

/// Codex's static facts.
pub const FACTS: AgentFacts = AgentFacts {
    name: "codex",
    display_name: "Codex",
    program: "codex",
    package: Some(Package {
        npm: "@openai/codex",
        tested_version: "0.171.0",
    }),
    version_args: &["--version"],
    models_args: None,
    config_env: &["CODEX_HOME", "HOME"],
    inherited_config_env: None,
    config_files: &[],
};

impl Adapter for Codex {
    fn mcp_registration(&self) -> Option<&'static dyn crate::mcp_registration::McpRegistration> {
        Some(&super::mcp_registration::Registration)
    }
    fn facts(&self) -> &'static AgentFacts {
        &FACTS
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        models::parse_version(stdout)
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(CodexStream)
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        crate::codex::verdict(summary, exit)
    }

    /// Codex reports a call its approval settings refused only on stderr.
    fn stderr_event(&self, line: &[u8]) -> Option<ganger_events::Event> {
        crate::codex::stderr_event(line)
    }

    /// Codex lingers after `turn.completed` (about 5 s offline, waiting for background
    /// network work: FACTS.md §3).
    fn linger(&self) -> Option<Duration> {
        Some(Duration::from_secs(2))
    }

    fn headless(&self) -> Option<Headless> {
        Some(command::HEADLESS_OPTIONS)
    }

    /// `model_reasoning_effort`, passed as a `-c` option.
    fn effort(&self, effort: &str) -> Option<toml::Table> {
        let mut table = toml::Table::new();
        table.insert("model_reasoning_effort".into(), effort.into());
        Some(table)
    }

    /// `codex app-server`: see [`crate::codex::app_server`].
    fn warm_plan(&self) -> Option<WarmPlan> {
        Some(crate::codex::app_server::warm_plan)
    }

    fn warm_protocol(&self) -> WarmProtocol {
        WarmProtocol::AppServer
    }

    fn warm_by_default(&self) -> bool {
        true
    }

    /// `$CODEX_HOME` (else `~/.codex`)`/sessions/…/rollout-…-<session>.jsonl`, wherever the
    /// worktree is: Codex finds a thread by its id (docs/agents/session-move.md).
    fn session_file(
        &self,
        env: &BTreeMap<String, String>,
        _worktree: &Path,
        session: &str,
    ) -> Option<PathBuf> {
        super::rollout::rollout_file(env, session)
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }

    fn model_route(
        &self,
        env: &std::collections::BTreeMap<String, String>,
        config: Option<&serde_json::Value>,
        _model: Option<&str>,
    ) -> Option<crate::ModelRoute> {
        Some(command::model_route(env, config))
    }
}
