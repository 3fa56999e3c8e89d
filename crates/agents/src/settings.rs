//! An agent's table in `ganger.toml` (`[agents.NAME]`): the keys every agent has (a program,
//! environment, configuration merged into its own) and the `command` agent's templates. The
//! engine reads the file; each adapter decides what of its table it plans with
//! ([`crate::Adapter::configuration`]) and which program it names
//! ([`crate::Adapter::named_program`]).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Settings of one agent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// The program to run instead of the one on `PATH`.
    pub command: Option<PathBuf>,
    /// Extra environment for the agent.
    pub env: BTreeMap<String, String>,
    /// Agent configuration merged into the agent's own (OpenCode: `OPENCODE_CONFIG_CONTENT`;
    /// Codex: `-c` options; Claude Code: `--settings`).
    pub config: Option<toml::Table>,
    /// The `command` agent: the argument template of a new session (program first), with
    /// `{prompt}`, `{session}`, `{model}` and `{title}` filled in.
    pub argv: Option<Vec<String>>,
    /// The `command` agent: the template of a resumed session (default: `argv`).
    pub resume_argv: Option<Vec<String>>,
    /// The `command` agent: how the prompt is passed, `argv` or `stdin` (default `stdin`).
    pub prompt: Option<String>,
    /// The `command` agent: which stream format it prints (`text`, or an agent's name).
    pub format: Option<String>,
    /// The `command` agent: the program and arguments of its interactive interface on a
    /// session, for `ganger attach` (`{session}` and `{model}` filled in).
    pub interactive_argv: Option<Vec<String>>,
}

/// The agents' tables as `ganger init`'s commented `ganger.toml` shows them: examples of an
/// installed agent's program, environment and configuration, and the `command` agent's
/// templates.
pub const SETTINGS_TEMPLATE: &str = r#"# [agents.opencode]
# command = "/usr/local/bin/opencode"      # instead of the opencode on PATH
# env = { OPENCODE_DISABLE_MODELS_FETCH = "1" }
# [agents.opencode.config]                 # merged into OpenCode's own configuration
# share = "disabled"
#
# [agents.codex.config]                    # passed to Codex as -c key=value options
# model_provider = "mine"
#
# [agents.command]                         # any other CLI (--agent command)
# argv = ["my-agent", "--json", "{prompt}"]            # {prompt} {session} {model} {title}
# resume_argv = ["my-agent", "--json", "--resume", "{session}", "{prompt}"]
# prompt = "argv"                          # or "stdin"
# format = "text"                          # or opencode, claude, codex, gemini, qwen
# interactive_argv = ["my-agent", "--resume", "{session}"]   # what `ganger attach` opens
"#;
