//! The `command` agent as an [`Adapter`]: the command from the templates, the stream read
//! with the named format's parser, and that format's success test (for `text`: exit 0).

use super::template::{Settings, fill_argv};
use super::text::TextStream;
use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::capabilities::{Interactive, NamedProgram};
use crate::facts::AgentFacts;
use crate::settings::AgentConfig;
use crate::{AgentExit, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::time::Duration;

/// A configured CLI that prints `format`.
#[derive(Debug)]
pub struct CommandAgent {
    /// `text` or a known agent's name.
    pub format: &'static str,
}

impl CommandAgent {
    fn borrowed(&self) -> Option<&'static dyn Adapter> {
        (self.format != "text")
            .then(|| crate::adapter(self.format))
            .flatten()
    }
}

/// The `command` agent's static facts: any CLI, so no package, version or catalog of its own.
pub const FACTS: AgentFacts = AgentFacts {
    name: super::NAME,
    display_name: "a configured command",
    // Not used: the program is the first word of `argv`.
    program: super::NAME,
    package: None,
    version_args: &["--version"],
    models_args: None,
    config_env: &[],
    inherited_config_env: None,
    config_files: &[],
};

impl Adapter for CommandAgent {
    fn facts(&self) -> &'static AgentFacts {
        &FACTS
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        stdout.lines().next().map(|l| l.trim().to_owned())
    }

    /// Its templates and formats (`[agents.command]`'s own keys), not a `config` table.
    fn configuration(&self, settings: &AgentConfig) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "argv": settings.argv,
            "resume_argv": settings.resume_argv,
            "prompt": settings.prompt,
            "format": settings.format,
        }))
    }

    /// The first word of `argv`.
    fn named_program(&self, settings: &AgentConfig) -> Result<Option<NamedProgram>, PlanError> {
        let program = settings
            .argv
            .as_ref()
            .and_then(|argv| argv.first())
            .ok_or_else(|| {
                PlanError::Setting(
                    "the command agent has no program: set [agents.command] argv in ganger.toml"
                        .into(),
                )
            })?;
        Ok(Some(NamedProgram {
            program: program.clone(),
            named_in: "agents.command.argv in ganger.toml",
        }))
    }

    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
        let settings = Settings::of(request)?;
        let template = match (request.session, &settings.resume_argv) {
            (Some(_), Some(resume)) => resume,
            _ => settings
                .argv
                .as_ref()
                .ok_or_else(|| PlanError::CommandSettings {
                    reason: "argv is not set".into(),
                })?,
        };
        let names_session = template.iter().any(|arg| arg.contains("{session}"));
        let session = match request.session {
            Some(session) => Some(session),
            None if names_session => Some(request.new_session_id),
            None => None,
        };
        let on_stdin = settings.prompt_on_stdin();
        let filled = fill_argv(
            template,
            &[
                ("prompt", Some(request.prompt)),
                ("session", session),
                ("model", request.model),
                ("title", Some(request.title)),
            ],
        );
        let mut plan = CommandPlan::new(
            filled.into_iter().skip(1).collect(),
            vec![(
                "PWD".into(),
                request.worktree.to_string_lossy().into_owned(),
            )],
            on_stdin.then(|| request.prompt.as_bytes().to_vec()),
        );
        if request.session.is_none() && names_session {
            plan.session = Some(request.new_session_id.to_owned());
        }
        Ok(plan)
    }

    fn stream_parser(&self) -> Box<dyn StreamParser> {
        match self.borrowed() {
            Some(adapter) => adapter.stream_parser(),
            None => Box::new(TextStream),
        }
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        match self.borrowed() {
            Some(adapter) => adapter.verdict(summary, exit),
            None if exit.success() => Verdict::done(),
            None => Verdict::failed(format!("the command {exit}")),
        }
    }

    fn refusal_stops_the_run(&self) -> bool {
        self.borrowed()
            .is_some_and(|adapter| adapter.refusal_stops_the_run())
    }

    fn stderr_event(&self, line: &[u8]) -> Option<ganger_events::Event> {
        self.borrowed()
            .and_then(|adapter| adapter.stderr_event(line))
    }

    fn linger(&self) -> Option<Duration> {
        self.borrowed().and_then(|adapter| adapter.linger())
    }

    /// `interactive_argv`, with the session and the model filled in.
    fn interactive(
        &self,
        request: &RoundRequest<'_>,
        settings: &AgentConfig,
    ) -> Result<Option<Interactive>, PlanError> {
        let template = settings.interactive_argv.as_ref().ok_or_else(|| {
            PlanError::Setting(
                "the command agent has no interactive interface: set [agents.command] \
                 interactive_argv in ganger.toml"
                    .into(),
            )
        })?;
        let filled = fill_argv(
            template,
            &[("session", request.session), ("model", request.model)],
        );
        let (first, rest) = filled
            .split_first()
            .ok_or_else(|| PlanError::Setting("agents.command.interactive_argv is empty".into()))?;
        Ok(Some(Interactive {
            program: Some(NamedProgram {
                program: first.clone(),
                named_in: "agents.command.interactive_argv",
            }),
            plan: CommandPlan::new(rest.to_vec(), Vec::new(), None),
        }))
    }

    /// A command is configured by hand; pointing it at a model is its own business.
    fn scripted_endpoint(&self, _base_url: &str) -> ScriptedEndpoint {
        ScriptedEndpoint {
            model: String::new(),
            env: Vec::new(),
            config: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::Permission;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn plan_for(config: serde_json::Value, session: Option<&str>) -> CommandPlan {
        planned(&config, session).unwrap()
    }

    fn planned(
        config: &serde_json::Value,
        session: Option<&str>,
    ) -> Result<CommandPlan, PlanError> {
        let env = BTreeMap::new();
        CommandAgent { format: "text" }.plan(&RoundRequest {
            resume_at: None,
            prompt: "fix it",
            session,
            new_session_id: "11111111-2222-4333-8444-555555555555",
            title: "t1",
            model: None,
            worktree: Path::new("/w"),
            config: Some(config),
            inherited_config: None,
            permission: Permission::Write,
            sandboxed: false,
            env: &env,
            agent_dir: Path::new("/w/.ganger/agents/command"),
        })
    }

    #[test]
    fn a_new_session_named_in_the_template_is_minted_and_returned() {
        let config = json!({
            "argv": ["tool", "--session-id", "{session}", "--model", "{model}", "{prompt}"],
            "resume_argv": ["tool", "--resume", "{session}", "{prompt}"],
            "prompt": "argv",
        });
        let plan = plan_for(config.clone(), None);
        assert_eq!(
            plan.args,
            [
                "--session-id",
                "11111111-2222-4333-8444-555555555555",
                "fix it"
            ]
        );
        assert_eq!(plan.stdin, None);
        assert_eq!(
            plan.session.as_deref(),
            Some("11111111-2222-4333-8444-555555555555")
        );
        let resumed = plan_for(config, Some("s-9"));
        assert_eq!(resumed.args, ["--resume", "s-9", "fix it"]);
        assert_eq!(resumed.session, None);
    }

    #[test]
    fn the_prompt_goes_on_stdin_by_default_and_text_rounds_end_by_exit_code() {
        let plan = plan_for(json!({"argv": ["tool", "--print"]}), None);
        assert_eq!(plan.args, ["--print"]);
        assert_eq!(plan.stdin.as_deref(), Some(&b"fix it"[..]));
        let agent = CommandAgent { format: "text" };
        let summary = RoundSummary::default();
        assert!(agent.verdict(&summary, AgentExit::Code(0)).done);
        let failed = agent.verdict(&summary, AgentExit::Code(3));
        assert_eq!(
            failed.reason.as_deref(),
            Some("the command exited with code 3")
        );
    }

    #[test]
    fn a_bad_prompt_mode_is_a_configuration_error() {
        let config = json!({"argv": ["tool"], "prompt": "pipe"});
        let err = planned(&config, None).unwrap_err();
        assert!(err.to_string().contains("prompt = \"pipe\""), "{err}");
    }
}
