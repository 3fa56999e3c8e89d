//! OpenCode as an [`Adapter`]: the pieces of this folder behind the contract the engine uses.

use crate::adapter::{
    Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint, SessionFinder,
};
use crate::opencode::{OpenCodeStream, command, models};
use crate::{AgentExit, StreamParser, Verdict};
use ganger_events::RoundSummary;

/// OpenCode (`opencode-ai`).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenCode;

impl Adapter for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn display_name(&self) -> &'static str {
        "OpenCode"
    }

    fn program(&self) -> &'static str {
        "opencode"
    }

    fn npm_package(&self) -> &'static str {
        "opencode-ai"
    }

    fn tested_version(&self) -> &'static str {
        "1.18.33"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        models::parse_version(stdout)
    }

    fn models_args(&self) -> Option<&'static [&'static str]> {
        Some(&["models"])
    }

    fn parse_models(&self, stdout: &str) -> Vec<String> {
        models::parse_models(stdout)
    }

    fn config_env(&self) -> &'static [&'static str] {
        &[
            command::CONFIG_CONTENT_ENV,
            "OPENCODE_CONFIG",
            "OPENCODE_CONFIG_DIR",
            "OPENCODE_DISABLE_MODELS_FETCH",
            "OPENCODE_DISABLE_PROJECT_CONFIG",
            "XDG_CONFIG_HOME",
            "HOME",
        ]
    }

    fn inherited_config_env(&self) -> Option<&'static str> {
        Some(command::CONFIG_CONTENT_ENV)
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(OpenCodeStream)
    }

    /// `opencode run` stops at a refused call (FACTS.md §1): no further model request.
    fn refusal_stops_the_run(&self) -> bool {
        true
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        crate::opencode::verdict(summary, exit)
    }

    fn interactive(&self, plan: CommandPlan) -> Option<CommandPlan> {
        Some(
            crate::interactive::Headless {
                leading: &["run"],
                flags: &[],
                valued: &["--format", "--title"],
                joined: &[],
                trailing: None,
            }
            .strip(plan),
        )
    }

    /// OpenCode names every model `provider/model`.
    fn model_name_problem(&self, model: &str) -> Option<String> {
        (!model.contains('/') || model.starts_with('/') || model.ends_with('/')).then(|| {
            format!("OpenCode's models are named provider/model (mock/scripted); {model:?} is not")
        })
    }

    /// OpenCode saves a session, titled as ganger asked and with the prompt in it, before
    /// the model answers; `session list` finds it.
    fn session_finder(&self) -> Option<SessionFinder> {
        Some(SessionFinder {
            args: &["session", "list", "--format", "json"],
            pick: super::sessions::pick_session,
        })
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }
}
