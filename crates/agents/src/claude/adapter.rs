//! Claude Code as an [`Adapter`]: the pieces of this folder and the shared stream-json reader
//! behind the contract the engine uses.

use crate::adapter::{Adapter, CommandPlan, PlanError, RoundRequest, ScriptedEndpoint};
use crate::claude::{command, version};
use crate::stream_json::{self, Dialect, StreamJsonParser};
use crate::{AgentExit, StreamParser, Verdict};
use ganger_events::RoundSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Claude Code (`@anthropic-ai/claude-code`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Claude;

impl Adapter for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn display_name(&self) -> &'static str {
        "Claude Code"
    }

    fn program(&self) -> &'static str {
        "claude"
    }

    fn npm_package(&self) -> &'static str {
        "@anthropic-ai/claude-code"
    }

    fn tested_version(&self) -> &'static str {
        "2.1.332"
    }

    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }

    fn parse_version(&self, stdout: &str) -> Option<String> {
        version::parse_version(stdout)
    }

    /// Claude Code has no model catalog: any name is passed through to the API.
    fn models_args(&self) -> Option<&'static [&'static str]> {
        None
    }

    fn parse_models(&self, _stdout: &str) -> Vec<String> {
        Vec::new()
    }

    fn config_env(&self) -> &'static [&'static str] {
        &[
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_MODEL",
            "ANTHROPIC_DEFAULT_OPUS_MODEL",
            "ANTHROPIC_DEFAULT_SONNET_MODEL",
            "ANTHROPIC_DEFAULT_HAIKU_MODEL",
            "ANTHROPIC_SMALL_FAST_MODEL",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
            "CLAUDE_CONFIG_DIR",
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
        Box::new(StreamJsonParser::new(Dialect::Claude))
    }

    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict {
        stream_json::verdict(Dialect::Claude, summary, exit)
    }

    /// Claude prints its `result` line and may take a moment to exit.
    fn linger(&self) -> Option<Duration> {
        Some(Duration::from_secs(3))
    }

    fn interactive(&self, plan: CommandPlan) -> Option<CommandPlan> {
        Some(
            crate::interactive::Headless {
                leading: &[],
                flags: &["-p", "--verbose"],
                valued: &["--output-format"],
                joined: &[],
                trailing: None,
            }
            .strip(plan),
        )
    }

    /// `$CLAUDE_CONFIG_DIR` (else `~/.claude`)`/projects/<the worktree, each character other
    /// than a letter or digit as '-'>/<session>.jsonl` (measured with 2.1.197).
    fn session_file(
        &self,
        env: &BTreeMap<String, String>,
        worktree: &Path,
        session: &str,
    ) -> Option<PathBuf> {
        let config = match env.get("CLAUDE_CONFIG_DIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => PathBuf::from(env.get("HOME")?).join(".claude"),
        };
        let project: String = worktree
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        Some(
            config
                .join("projects")
                .join(project)
                .join(format!("{session}.jsonl")),
        )
    }

    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint {
        command::scripted_endpoint(base_url)
    }
}
