//! Qwen Code as an [`Adapter`]: the pieces of this folder and the shared stream-json reader
//! behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::facts::{AgentFacts, Package};
use crate::qwen::command;
use crate::stream_json::{self, Dialect, StreamJsonParser};
use crate::{AgentExit, Headless, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Qwen Code (`@qwen-code/qwen-code`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Qwen;

/// Qwen Code's static facts.
pub const FACTS: AgentFacts = AgentFacts {
    name: "qwen",
    display_name: "Qwen Code",
    program: "qwen",
    package: Some(Package {
        npm: "@qwen-code/qwen-code",
        tested_version: "0.24.4",
    }),
    version_args: &["--version"],
    // No model catalog: the OpenAI endpoint decides.
    models_args: None,
    config_env: &[
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        crate::qwen::settings::SYSTEM_SETTINGS_ENV,
        "QWEN_HOME",
        "HOME",
    ],
    inherited_config_env: None,
    config_files: &[],
};

impl Adapter for Qwen {
    fn facts(&self) -> &'static AgentFacts {
        &FACTS
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        crate::claude::parse_version(stdout)
    }

    /// Qwen Code has no model catalog: the OpenAI endpoint decides.
    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
    }

    fn warm_plan(&self) -> Option<crate::WarmPlan> {
        Some(command::warm_plan)
    }

    fn warm_by_default(&self) -> bool {
        true
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

    fn headless(&self) -> Option<Headless> {
        Some(command::HEADLESS_OPTIONS)
    }

    /// `<runtime dir>/projects/<the worktree, each character other than a letter or digit as
    /// '-'>/chats/<session>.jsonl`, the runtime dir being `$QWEN_RUNTIME_DIR`, else
    /// `$QWEN_HOME`, else `~/.qwen` (read in 0.24.4's `Storage`; a session resumes only where
    /// its first line's `cwd` is the working directory: docs/agents/session-move.md).
    fn session_file(
        &self,
        env: &BTreeMap<String, String>,
        worktree: &Path,
        session: &str,
    ) -> Option<PathBuf> {
        if !crate::is_session_name(session) {
            return None;
        }
        // A relative directory is the agent's to resolve: no guess.
        let set = ["QWEN_RUNTIME_DIR", "QWEN_HOME"]
            .iter()
            .find_map(|name| env.get(*name).filter(|dir| !dir.is_empty()));
        let base = match set {
            Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
            Some(_) => return None,
            None => PathBuf::from(env.get("HOME")?).join(".qwen"),
        };
        Some(
            base.join("projects")
                .join(crate::adapter::dashed(worktree))
                .join("chats")
                .join(format!("{session}.jsonl")),
        )
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
            "openai",
            "OPENAI_BASE_URL",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            env,
        ))
    }
}
