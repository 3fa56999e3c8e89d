//! Gemini CLI as an [`Adapter`]: the pieces of this folder behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::gemini::{GeminiStream, command, models};
use crate::{AgentExit, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::time::Duration;

/// Gemini CLI (`@google/gemini-cli`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Gemini;

impl Adapter for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn display_name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn program(&self) -> &'static str {
        "gemini"
    }

    fn npm_package(&self) -> &'static str {
        "@google/gemini-cli"
    }

    fn tested_version(&self) -> &'static str {
        "0.61.0"
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
        &[
            crate::gemini::settings::BASE_URL_ENV,
            crate::gemini::settings::HOME_ENV,
            "HOME",
        ]
    }

    fn inherited_config_env(&self) -> Option<&'static str> {
        None
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
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

    fn interactive(&self, plan: CommandPlan) -> Option<CommandPlan> {
        Some(
            crate::interactive::Headless {
                leading: &[],
                flags: &[],
                valued: &["--output-format", "-p"],
                joined: &[],
                trailing: None,
            }
            .strip(plan),
        )
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }
}
