//! Qwen Code as an [`Adapter`]: the pieces of this folder and the shared stream-json reader
//! behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::qwen::command;
use crate::stream_json::{self, Dialect, StreamJsonParser};
use crate::{AgentExit, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::time::Duration;

/// Qwen Code (`@qwen-code/qwen-code`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Qwen;

impl Adapter for Qwen {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn display_name(&self) -> &'static str {
        "Qwen Code"
    }

    fn program(&self) -> &'static str {
        "qwen"
    }

    fn npm_package(&self) -> &'static str {
        "@qwen-code/qwen-code"
    }

    fn tested_version(&self) -> &'static str {
        "0.24.4"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        crate::claude::parse_version(stdout)
    }

    /// Qwen Code has no model catalog: the OpenAI endpoint decides.
    fn models_args(&self) -> Option<&'static [&'static str]> {
        None
    }

    fn parse_models(&self, _stdout: &str) -> Vec<String> {
        Vec::new()
    }

    fn config_env(&self) -> &'static [&'static str] {
        &[
            "OPENAI_BASE_URL",
            "OPENAI_MODEL",
            crate::qwen::settings::SYSTEM_SETTINGS_ENV,
            "QWEN_HOME",
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
        Box::new(StreamJsonParser::new(Dialect::Qwen))
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        stream_json::verdict(Dialect::Qwen, summary, exit)
    }

    /// Qwen prints its `result` line and takes about 2 s more to exit (measured).
    fn linger(&self) -> Option<Duration> {
        Some(Duration::from_secs(3))
    }

    fn interactive(&self, plan: CommandPlan) -> Option<CommandPlan> {
        Some(
            crate::interactive::Headless {
                leading: &[],
                flags: &[],
                valued: &["--output-format"],
                joined: &["--prompt="],
                trailing: None,
            }
            .strip(plan),
        )
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }
}
