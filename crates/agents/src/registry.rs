//! The agents ganger knows, by name: the CLIs it installs and tests (one adapter each), and
//! the `command` agent, whose adapter depends on the stream format its settings name.

use crate::settings::AgentConfig;
use crate::{Adapter, command};

/// The agent of new tasks unless `ganger.toml` or `--agent` says otherwise.
pub const DEFAULT_AGENT: &str = crate::opencode::FACTS.name;

static KNOWN: &[&dyn Adapter] = &[
    &crate::opencode::OpenCode,
    &crate::claude::Claude,
    &crate::codex::Codex,
    &crate::gemini::Gemini,
    &crate::qwen::Qwen,
];

/// One of the agents ganger installs and tests, by name.
pub fn adapter(name: &str) -> Option<&'static dyn Adapter> {
    KNOWN.iter().copied().find(|a| a.name() == name)
}

/// Every agent ganger installs and tests, in the order `ganger init` lists them.
pub fn adapters() -> &'static [&'static dyn Adapter] {
    KNOWN
}

/// Every agent's name, the `command` agent last.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = KNOWN.iter().map(|a| a.name()).collect();
    names.push(command::NAME);
    names
}

/// Why no adapter answers to a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownAgent {
    /// No agent has the name.
    #[error("unknown agent {name:?}; known agents: {}", names().join(", "))]
    Name { name: String },
    /// The `command` agent's settings name a stream format there is no reader for.
    #[error(
        "agents.command.format in ganger.toml is {format:?}; formats: {}",
        command::FORMATS.join(", ")
    )]
    Format { format: String },
}

/// Any agent by name, the `command` agent as a plain text reader: for what does not read its
/// stream (its program, its image).
pub fn named(name: &str) -> Result<&'static dyn Adapter, UnknownAgent> {
    configured(name, &AgentConfig::default())
}

/// Any agent by name, with its table of `ganger.toml`: the `command` agent reads the stream
/// format `settings` names (`text` by default).
pub fn configured(
    name: &str,
    settings: &AgentConfig,
) -> Result<&'static dyn Adapter, UnknownAgent> {
    if name == command::NAME {
        let format = settings.format.as_deref().unwrap_or("text");
        return command::adapter(format).ok_or_else(|| UnknownAgent::Format {
            format: format.to_owned(),
        });
    }
    adapter(name).ok_or_else(|| UnknownAgent::Name {
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_adapter_is_pinned_at_the_version_the_tests_install() {
        let pinned = include_str!("../../../pinned-agents.txt");
        for adapter in adapters() {
            let spec = format!("{}@{}", adapter.npm_package(), adapter.tested_version());
            assert!(
                pinned.lines().any(|line| line.trim() == spec),
                "{spec} is not in pinned-agents.txt"
            );
        }
    }

    #[test]
    fn names_find_their_agents_and_the_command_agent_reads_its_format() {
        for name in names() {
            assert_eq!(named(name).map(|a| a.name()), Ok(name));
        }
        assert!(named(command::NAME).is_ok_and(|a| a.package().is_none()));
        let claude_format = AgentConfig {
            format: Some("claude".into()),
            ..AgentConfig::default()
        };
        // A stream without Claude's `result` line is not a finished Claude round; plain text
        // is judged by the exit code alone.
        let summary = ganger_events::RoundSummary::default();
        let exit = crate::AgentExit::Code(0);
        let claude_reader = configured(command::NAME, &claude_format);
        assert!(
            claude_reader
                .is_ok_and(|a| a.name() == command::NAME && !a.verdict(&summary, exit).done)
        );
        assert!(named(command::NAME).is_ok_and(|a| a.verdict(&summary, exit).done));
        assert_eq!(
            named("nosuch").map(|a| a.name()).unwrap_err().to_string(),
            "unknown agent \"nosuch\"; known agents: opencode, claude, codex, gemini, qwen, command"
        );
        let pipe = AgentConfig {
            format: Some("pipe".into()),
            ..AgentConfig::default()
        };
        assert_eq!(
            configured(command::NAME, &pipe)
                .map(|a| a.name())
                .unwrap_err(),
            UnknownAgent::Format {
                format: "pipe".into()
            }
        );
    }
}
