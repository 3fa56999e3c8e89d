//! The `command` agent as an [`Adapter`]: the command from the templates, the stream read
//! with the named format's parser, and that format's success test (for `text`: exit 0).

use super::template::{Settings, fill_argv};
use super::text::TextStream;
use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
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

impl Adapter for CommandAgent {
    fn name(&self) -> &'static str {
        super::NAME
    }

    fn display_name(&self) -> &'static str {
        "a configured command"
    }

    /// Not used: the program is the first word of `argv`.
    fn program(&self) -> &'static str {
        super::NAME
    }

    fn npm_package(&self) -> &'static str {
        ""
    }

    fn tested_version(&self) -> &'static str {
        ""
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        stdout.lines().next().map(|l| l.trim().to_owned())
    }

    fn models_args(&self) -> Option<&'static [&'static str]> {
        None
    }

    fn parse_models(&self, _stdout: &str) -> Vec<String> {
        Vec::new()
    }

    fn config_env(&self) -> &'static [&'static str] {
        &[]
    }

    fn inherited_config_env(&self) -> Option<&'static str> {
        None
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
        let env = BTreeMap::new();
        CommandAgent { format: "text" }
            .plan(&RoundRequest {
                resume_at: None,
                prompt: "fix it",
                session,
                new_session_id: "11111111-2222-4333-8444-555555555555",
                title: "t1",
                model: None,
                worktree: Path::new("/w"),
                config: Some(&config),
                inherited_config: None,
                permission: Permission::Write,
                sandboxed: false,
                env: &env,
                agent_dir: Path::new("/w/.ganger/agents/command"),
            })
            .unwrap()
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
        let env = BTreeMap::new();
        let config = json!({"argv": ["tool"], "prompt": "pipe"});
        let err = CommandAgent { format: "text" }
            .plan(&RoundRequest {
                resume_at: None,
                prompt: "x",
                session: None,
                new_session_id: "u",
                title: "t",
                model: None,
                worktree: Path::new("/w"),
                config: Some(&config),
                inherited_config: None,
                permission: Permission::Write,
                sandboxed: false,
                env: &env,
                agent_dir: Path::new("/d"),
            })
            .unwrap_err();
        assert!(err.to_string().contains("prompt = \"pipe\""), "{err}");
    }
}
