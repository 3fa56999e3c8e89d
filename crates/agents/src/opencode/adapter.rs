//! OpenCode as an [`Adapter`]: the pieces of this folder behind the contract the engine uses.

use crate::adapter::{
    Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint, SessionFinder, WarmPlan,
};
use crate::capabilities::SessionFork;
use crate::facts::{AgentFacts, ConfigFile, Package};
use crate::opencode::{OpenCodeStream, command, models};
use crate::settings::AgentConfig;
use crate::{AgentExit, Headless, StreamParser, Verdict};
use ganger_events::RoundSummary;

/// OpenCode (`opencode-ai`).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenCode;

/// OpenCode's static facts.
pub const FACTS: AgentFacts = AgentFacts {
    name: "opencode",
    display_name: "OpenCode",
    program: "opencode",
    package: Some(Package {
        npm: "opencode-ai",
        tested_version: "1.18.33",
    }),
    version_args: &["--version"],
    models_args: Some(&["models"]),
    config_env: &[
        command::CONFIG_CONTENT_ENV,
        "OPENCODE_CONFIG",
        "OPENCODE_CONFIG_DIR",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_PROJECT_CONFIG",
        "XDG_CONFIG_HOME",
        "HOME",
    ],
    inherited_config_env: Some(command::CONFIG_CONTENT_ENV),
    config_files: &[
        ConfigFile::InHome(".config/opencode/opencode.json"),
        ConfigFile::InHome(".config/opencode/opencode.jsonc"),
        ConfigFile::InRepo("opencode.json"),
        ConfigFile::InRepo("opencode.jsonc"),
    ],
};

impl Adapter for OpenCode {
    fn mcp_registration(&self) -> Option<&'static dyn crate::mcp_registration::McpRegistration> {
        Some(&super::mcp_registration::Registration)
    }
    fn facts(&self) -> &'static AgentFacts {
        &FACTS
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        models::parse_version(stdout)
    }

    fn parse_models(&self, stdout: &str) -> Vec<String> {
        models::parse_models(stdout)
    }

    fn configured_models(&self, settings: &AgentConfig) -> Vec<String> {
        settings
            .config
            .as_ref()
            .map(models::configured_models)
            .unwrap_or_default()
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        command::plan(request)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        Box::new(OpenCodeStream)
    }

    /// OpenCode's answer over ACP holds the turn's last request only; its database has each.
    fn warm_turn_usage(
        &self,
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        session: &str,
        since_ms: u64,
    ) -> Option<ganger_events::Usage> {
        crate::opencode::turn_usage(env, session, since_ms)
    }

    fn warm_by_default(&self) -> bool {
        true
    }
    fn warm_plan(&self) -> Option<WarmPlan> {
        Some(command::warm_plan)
    }

    /// `opencode run` stops at a refused call (FACTS.md §1): no further model request.
    fn refusal_stops_the_run(&self) -> bool {
        true
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        crate::opencode::verdict(summary, exit)
    }

    fn headless(&self) -> Option<Headless> {
        Some(command::HEADLESS_OPTIONS)
    }

    /// The build agent's `reasoningEffort`: a model option its provider sends
    /// (`reasoning_effort` for OpenAI-compatible ones).
    fn effort(&self, effort: &str) -> Option<toml::Table> {
        let mut build = toml::Table::new();
        build.insert("reasoningEffort".into(), effort.into());
        let mut agents = toml::Table::new();
        agents.insert("build".into(), toml::Value::Table(build));
        let mut table = toml::Table::new();
        table.insert("agent".into(), toml::Value::Table(agents));
        Some(table)
    }

    /// OpenCode forks a session at a message only through its server (`run --fork` copies a
    /// whole session), so ganger copies it through `export` and `import`.
    fn session_fork(&self) -> Option<SessionFork> {
        Some(SessionFork::Copy(super::fork::COPY))
    }

    /// OpenCode names every model `provider/model`.
    fn model_name_problem(&self, model: &str) -> Option<String> {
        (!model.contains('/') || model.starts_with('/') || model.ends_with('/')).then(|| {
            format!("OpenCode's models are named provider/model (mock/scripted); {model:?} is not")
        })
    }

    /// OpenCode saves a session, titled as ganger asked and with the prompt in it, before
    /// the model answers; `session list` finds it.
    /// Read out of OpenCode's database as `opencode export` prints it, taken in with `opencode
    /// import FILE` (measured with 1.18.33: docs/agents/session-move.md).
    fn session_carrier(&self) -> Option<crate::SessionCarrier> {
        Some(crate::SessionCarrier {
            export: super::session_export::export,
            import_args: |file| vec!["import".to_owned(), file.to_string_lossy().into_owned()],
        })
    }

    fn session_finder(&self) -> Option<SessionFinder> {
        Some(SessionFinder {
            args: &["session", "list", "--format", "json"],
            pick: super::sessions::pick_session,
        })
    }

    /// 1.18.33's config loader adds `"$schema"` to a project `opencode.json` (or `.jsonc`, in
    /// the worktree or its `.opencode/`) that lacks one, at every start (docs/agents/
    /// opencode-measured.md).
    fn own_edit(&self) -> Option<crate::OwnEdit> {
        Some(crate::OwnEdit {
            files: &[
                "opencode.json",
                "opencode.jsonc",
                ".opencode/opencode.json",
                ".opencode/opencode.jsonc",
            ],
            opening: "{\n  \"$schema\": \"https://opencode.ai/config.json\",",
            unless: "\"$schema\"",
        })
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }

    fn model_route(
        &self,
        env: &std::collections::BTreeMap<String, String>,
        config: Option<&serde_json::Value>,
        model: Option<&str>,
    ) -> Option<crate::ModelRoute> {
        command::model_route(env, config, model)
    }
}
