//! Codex as an [`Adapter`]: the pieces of this folder behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::codex::{CodexStream, command, models};
use crate::{AgentExit, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::time::Duration;

/// Codex CLI (`@openai/codex`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Codex;

impl Adapter for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn display_name(&self) -> &'static str {
        "Codex"
    }

    fn program(&self) -> &'static str {
        "codex"
    }

    fn npm_package(&self) -> &'static str {
        "@openai/codex"
    }

    fn tested_version(&self) -> &'static str {
        "0.171.0"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        models::parse_version(stdout)
    }

    fn models_args(&self) -> Option<&'static [&'static str]> {
        None
    }

    fn parse_models(&self, _stdout: &str) -> Vec<String> {
        Vec::new()
    }

    fn config_env(&self) -> &'static [&'static str] {
        &["CODEX_HOME", "HOME"]
    }

    fn inherited_config_env(&self) -> Option<&'static str> {
        None
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

    fn interactive(&self, plan: CommandPlan) -> Option<CommandPlan> {
        Some(
            crate::interactive::Headless {
                leading: &["exec"],
                flags: &["--json", "--skip-git-repo-check"],
                valued: &[],
                joined: &[],
                trailing: Some("-"),
            }
            .strip(plan),
        )
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }
}
