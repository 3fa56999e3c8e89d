//! Gemini CLI as an [`Adapter`]: the pieces of this folder behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::facts::{AgentFacts, Package};
use crate::gemini::{GeminiStream, command};
use crate::{AgentExit, Headless, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Gemini CLI (`@google/gemini-cli`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

/// Gemini CLI's static facts.
pub const FACTS: AgentFacts = AgentFacts {
    name: "gemini",
    display_name: "Gemini CLI",
    program: "gemini",
    package: Some(Package {
        npm: "@google/gemini-cli",
        tested_version: "0.61.0",
    }),
    version_args: &["--version"],
    models_args: None,
    config_env: &[
        crate::gemini::settings::BASE_URL_ENV,
        crate::gemini::settings::HOME_ENV,
        "HOME",
    ],
    inherited_config_env: None,
    config_files: &[],
};

impl Adapter for Gemini {
    fn mcp_registration(&self) -> Option<&'static dyn crate::mcp_registration::McpRegistration> {
        Some(&super::mcp_registration::Registration)
    }
    fn facts(&self) -> &'static AgentFacts {
        &FACTS
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        super::parse_version(stdout)
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
    }

    fn warm_plan(&self) -> Option<crate::WarmPlan> {
        Some(command::warm_plan)
    }

    /// Gemini refuses a path outside its workspace itself, over ACP as on its own stream.
    fn warm_refusal(&self) -> Option<crate::acp::Refusal> {
        Some(crate::gemini::normalize::outside_workspace)
    }

    fn warm_by_default(&self) -> bool {
        true
    }
    /// Gemini's `session/load` can empty the session it loads (docs/agents/acp-measured.md).
    fn warm_loads_sessions(&self) -> bool {
        false
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(GeminiStream::default())
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        crate::gemini::verdict(summary, exit)
    }

    /// Gemini may linger after its `result` (telemetry, session summaries).
    fn linger(&self) -> Option<Duration> {
        Some(Duration::from_secs(2))
    }

    fn headless(&self) -> Option<Headless> {
        Some(command::HEADLESS_OPTIONS)
    }

    /// `$GEMINI_CLI_HOME` (else `$HOME`)`/.gemini/tmp/<the worktree's project>/chats/`
    /// `session-…-<first 8 of the id>.jsonl` (docs/agents/session-move.md).
    fn session_file(
        &self,
        env: &BTreeMap<String, String>,
        worktree: &Path,
        session: &str,
    ) -> Option<PathBuf> {
        super::chats::chat_file(env, worktree, session)
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }

    fn model_route(
        &self,
        env: &std::collections::BTreeMap<String, String>,
        _config: Option<&serde_json::Value>,
        _model: Option<&str>,
    ) -> Option<crate::ModelRoute> {
        Some(crate::model_route::env_route(
            "gemini",
            crate::gemini::settings::BASE_URL_ENV,
            "https://generativelanguage.googleapis.com",
            "GEMINI_API_KEY",
            env,
        ))
    }
}
