//! The adapter contract: everything the engine needs to know of one agent CLI, as pure
//! functions. An adapter hands out its agent's static facts, builds the command for a new or a
//! resumed session, says how to list its models, reads its stream, judges its rounds and says
//! what its CLI can do (an interactive interface, a reasoning effort, forking a session, finding
//! a lost one); it never starts a process itself.

use crate::capabilities::{Interactive, NamedProgram, SessionFork};
use crate::facts::{AgentFacts, Package};
use crate::interactive::Headless;
use crate::settings::AgentConfig;
use crate::{AgentExit, StreamParser, Verdict};
pub use ganger_events::Permission;
use ganger_events::RoundSummary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What one round asks of the agent.
#[derive(Debug, Clone)]
pub struct RoundRequest<'a> {
    /// The prompt, exactly as the model must receive it.
    pub prompt: &'a str,
    /// The session to resume, or `None` for a new one.
    pub session: Option<&'a str>,
    /// With `session`: continue it only up to this point of the agent's own, as a new session
    /// (a fork; `ganger rewind`). Claude Code: the `uuid` of an `assistant` event, given to
    /// `--resume-session-at` with `--fork-session`. Adapters that cannot ignore it (the engine
    /// only sets it for those that can).
    pub resume_at: Option<&'a str>,
    /// A fresh UUID (v4) an adapter may use to name a new session up front, for CLIs that
    /// take one (`{session}` in a `command` agent's template); then it returns it as
    /// [`CommandPlan::session`].
    pub new_session_id: &'a str,
    /// The title of a new session (the task's slug).
    pub title: &'a str,
    /// The model, as `provider/model`, or `None` for the agent's own default.
    pub model: Option<&'a str>,
    /// The worktree the agent works in.
    pub worktree: &'a Path,
    /// Extra agent configuration from `ganger.toml` (OpenCode: merged into its config).
    pub config: Option<&'a serde_json::Value>,
    /// The agent configuration already in the user's environment, if any (OpenCode:
    /// `OPENCODE_CONFIG_CONTENT`), which `config` is merged over rather than replacing it.
    pub inherited_config: Option<&'a str>,
    /// What the agent may do.
    pub permission: Permission,
    /// Whether the round really runs inside a sandbox (Claude refuses to bypass permissions
    /// as root unless told so, and ganger tells it only then).
    pub sandboxed: bool,
    /// The environment the agent will start with before the plan's own variables: the user's,
    /// `ganger.toml`'s and the keys'. Adapters read it to decide (is a home under the temporary
    /// directory? did the user bound retries already?), never to copy secrets into arguments.
    pub env: &'a BTreeMap<String, String>,
    /// A directory ganger keeps for this agent's generated files (settings, a private
    /// temporary directory); the plan's `files` and `dirs` go under it.
    pub agent_dir: &'a Path,
}

impl RoundRequest<'_> {
    /// A variable of the agent's starting environment, if set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }
}

/// The command an adapter wants run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPlan {
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Variables to set on top of the user's environment.
    pub env: Vec<(String, String)>,
    /// What to write to the agent's stdin (then closed); `None` for /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// Files the engine writes before starting the agent (absolute paths under the request's
    /// `agent_dir`), such as settings the CLI reads from a path given in `env`.
    pub files: Vec<(PathBuf, String)>,
    /// Directories the engine creates before starting the agent (under `agent_dir`).
    pub dirs: Vec<PathBuf>,
    /// The session this round runs in when the plan named it up front (the request's
    /// `new_session_id`); the stream's own session id, if it names one, wins.
    pub session: Option<String>,
}

impl CommandPlan {
    /// A plan of arguments and environment only.
    pub fn new(args: Vec<String>, env: Vec<(String, String)>, stdin: Option<Vec<u8>>) -> Self {
        CommandPlan {
            args,
            env,
            stdin,
            files: Vec::new(),
            dirs: Vec::new(),
            session: None,
        }
    }
}

/// How to point an agent at ganger's scripted model server (`ganger agents doctor`, the demo,
/// the tests): what goes in `ganger.toml` for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedEndpoint {
    /// The model to ask for.
    pub model: String,
    /// Variables for `[agents.NAME.env]`.
    pub env: Vec<(String, String)>,
    /// The `[agents.NAME.config]` table, as JSON, if the agent needs one.
    pub config: Option<serde_json::Value>,
}

/// How an adapter's command failed to build.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The user's inherited agent configuration is not valid.
    #[error("{name} in the environment is not a JSON object: {reason}")]
    InheritedConfig { name: &'static str, reason: String },
    /// `ganger.toml`'s configuration for the agent cannot be used.
    #[error("[agents.{agent}.config] in ganger.toml: {reason}")]
    Config { agent: &'static str, reason: String },
    /// `ganger.toml`'s `[agents.command]` (the command agent's own keys) cannot be used.
    #[error("[agents.command] in ganger.toml: {reason}")]
    CommandSettings { reason: String },
    /// A setting the agent needs is missing or cannot be used; the message says which.
    #[error("{0}")]
    Setting(String),
}

/// How to ask a CLI for a session it saved under the title ganger gave a round: the arguments
/// that list its sessions, and which of the listed sessions is the round's.
#[derive(Debug, Clone, Copy)]
pub struct SessionFinder {
    pub args: &'static [&'static str],
    /// The session titled `title` in `directory` and made at `since_ms` (Unix ms) or later,
    /// the newest if there are several, from what `args` printed.
    pub pick: fn(
        listing: &str,
        title: &str,
        directory: &std::path::Path,
        since_ms: i64,
    ) -> Option<String>,
}

/// Reads session `session` out of the store of the agent run with environment `env`.
pub type SessionExport =
    fn(env: &BTreeMap<String, String>, session: &str) -> Result<Vec<u8>, String>;

/// How a session an agent keeps in its own database (not a file) goes to another host: read
/// out as a file after each round, taken in by the agent's CLI on the host the task moves to.
#[derive(Debug, Clone, Copy)]
pub struct SessionCarrier {
    /// Session `session` as a file another host takes in, from the store of the agent run
    /// with environment `env`; `Err` says why it could not be read.
    pub export: SessionExport,
    /// The arguments that take in a file [`SessionCarrier::export`] made (the paths in it
    /// already this host's), run in the worktree with the round's environment.
    pub import_args: fn(file: &std::path::Path) -> Vec<String>,
}

/// How an agent kept warm is started, for rounds like the request: see [`Adapter::warm_plan`].
pub type WarmPlan = fn(&RoundRequest<'_>) -> Result<CommandPlan, PlanError>;

/// How ganger speaks to an agent kept warm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmProtocol {
    /// The Agent Client Protocol ([`crate::acp`]): sessions made and loaded in one process.
    Acp,
    /// Claude Code's stream-json input with its control messages ([`crate::claude::warm`]):
    /// one session per process, the turn's stream the cold round's.
    StreamJsonControl,
    /// Codex's app server ([`crate::codex::app_server`]): JSON-RPC threads and turns, loaded and
    /// started in one process, each turn written into the round's stream in the cold round's
    /// dialect.
    AppServer,
}

/// One agent CLI.
pub trait Adapter: Send + Sync {
    /// The agent's static facts: one constant in its folder.
    fn facts(&self) -> &'static AgentFacts;
    /// The name used in `--agent` and `ganger.toml` (`opencode`).
    fn name(&self) -> &'static str {
        self.facts().name
    }
    /// The CLI's own name for people (`OpenCode`).
    fn display_name(&self) -> &'static str {
        self.facts().display_name
    }
    /// The program looked up on `PATH` unless `ganger.toml` names another.
    fn program(&self) -> &'static str {
        self.facts().program
    }
    /// The package ganger installs and tests; `None` for a CLI the user brings.
    fn package(&self) -> Option<Package> {
        self.facts().package
    }
    /// The npm package ganger installs (empty without a [`Adapter::package`]).
    fn npm_package(&self) -> &'static str {
        self.package().map_or("", |package| package.npm)
    }
    /// The version ganger is tested with (empty without a [`Adapter::package`]).
    fn tested_version(&self) -> &'static str {
        self.package().map_or("", |package| package.tested_version)
    }
    /// The arguments that print the CLI's version.
    fn version_args(&self) -> &'static [&'static str] {
        self.facts().version_args
    }
    /// Reads the version out of what `version_args` printed.
    fn parse_version(&self, stdout: &str) -> Option<String>;
    /// The arguments that list available models, or `None` when the CLI has no catalog (the
    /// model is then reported as unchecked).
    fn models_args(&self) -> Option<&'static [&'static str]> {
        self.facts().models_args
    }
    /// Reads the model list out of what `models_args` printed.
    fn parse_models(&self, stdout: &str) -> Vec<String> {
        let _ = stdout;
        Vec::new()
    }
    /// Models that the agent's settings in `ganger.toml` define themselves (OpenCode's
    /// `provider.P.models.M`): the agent lists them whatever else it offers, so they are
    /// available without asking it (which costs an agent start, seconds).
    fn configured_models(&self, settings: &AgentConfig) -> Vec<String> {
        let _ = settings;
        Vec::new()
    }
    /// Environment variables that change which models the CLI offers (part of the model
    /// cache key).
    fn config_env(&self) -> &'static [&'static str] {
        self.facts().config_env
    }
    /// The environment variable holding inherited agent configuration, if any.
    fn inherited_config_env(&self) -> Option<&'static str> {
        self.facts().inherited_config_env
    }
    /// The configuration this adapter plans with ([`RoundRequest::config`]), from its table
    /// in `ganger.toml`: its `config` table, as JSON.
    fn configuration(&self, settings: &AgentConfig) -> Option<serde_json::Value> {
        serde_json::to_value(settings.config.as_ref()?).ok()
    }
    /// The program the agent's settings name in place of its own (`None`: its own, from
    /// `ganger.toml`'s `command`, ganger's install or `PATH`), or why they name none when
    /// they must.
    fn named_program(&self, settings: &AgentConfig) -> Result<Option<NamedProgram>, PlanError> {
        let _ = settings;
        Ok(None)
    }
    /// The command for one round.
    fn plan(&self, request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError>;
    /// A fresh reader for one round's stream.
    fn stream_parser(&self) -> Box<dyn StreamParser>;
    /// Whether a round is done, from its summary and how the process ended. When the agent
    /// printed its last event and then lingered until ganger stopped it, `exit` is
    /// `Code(0)`: the stream is what counts. A tool call refused by the agent's permissions
    /// fails the round (docs/design.md, "Refused tool calls").
    fn verdict(&self, summary: &RoundSummary, exit: AgentExit) -> Verdict;
    /// Whether a round run with `permission`, in ganger's sandbox or not, is done: the
    /// [`Adapter::verdict`], except where a refused call is a guard doing what was asked (the
    /// report lists it and the round is judged on the rest): in a read-only round, and in
    /// ganger's sandbox, which is the boundary there (what it stops is a tool's error for the
    /// agent; the agents' own guards are told to step aside, and one that cannot, Gemini's
    /// workspace check, counts as the sandbox would). A CLI that stops its run at a refusal
    /// ([`Adapter::refusal_stops_the_run`]) fails the round in any case. This is what the
    /// engine asks.
    fn round_verdict(
        &self,
        summary: &RoundSummary,
        exit: AgentExit,
        permission: Permission,
        sandboxed: bool,
    ) -> Verdict {
        let guarded = permission == Permission::ReadOnly || sandboxed;
        if !guarded || summary.rejection_count == 0 || self.refusal_stops_the_run() {
            return self.verdict(summary, exit);
        }
        let judged = RoundSummary {
            rejections: Vec::new(),
            rejection_count: 0,
            ..summary.clone()
        };
        self.verdict(&judged, exit)
    }
    /// Whether the CLI ends its run at a refused call (OpenCode's `run` does): the round's
    /// work stopped there, so the refusal fails it in any mode.
    fn refusal_stops_the_run(&self) -> bool {
        false
    }
    /// The event a line of the agent's stderr stands for, if any: for CLIs that report
    /// something the round's verdict needs only there (Codex logs a call its approval
    /// settings refused on stderr, with no event in its stream). The engine folds it into the
    /// round's summary as it folds the stream's events.
    fn stderr_event(&self, line: &[u8]) -> Option<ganger_events::Event> {
        let _ = line;
        None
    }
    /// How long the process may linger after its last event of the round
    /// ([`ganger_events::Event::Ended`]) before ganger stops it; `None` when the CLI has no
    /// such event and the round ends when the process does.
    fn linger(&self) -> Option<Duration> {
        None
    }
    /// The agent's own interactive interface on the session `request` resumes (its prompt
    /// empty), for `ganger attach`: the round's command with what makes it headless
    /// ([`Adapter::headless`]) taken out, so that the person sees the same session, model,
    /// settings and permissions; `None` when the CLI has none.
    fn interactive(
        &self,
        request: &RoundRequest<'_>,
        settings: &AgentConfig,
    ) -> Result<Option<Interactive>, PlanError> {
        let _ = settings;
        match self.headless() {
            Some(headless) => Ok(Some(headless.interactive(self.plan(request)?))),
            None => Ok(None),
        }
    }
    /// What makes the round's command headless (the print mode, the stream format, the
    /// prompt), taken out of it for [`Adapter::interactive`]; `None` when the CLI has no
    /// interactive interface.
    fn headless(&self) -> Option<Headless> {
        None
    }
    /// The entries of its `config` table that give a role's reasoning effort to the agent
    /// (`ganger.toml`'s `roles.NAME.effort`); `None` when ganger cannot give it one.
    fn effort(&self, effort: &str) -> Option<toml::Table> {
        let _ = effort;
        None
    }
    /// How a session goes back to the end of an earlier round (`ganger rewind`); `None`:
    /// the next round starts a new session told what the kept rounds did.
    fn session_fork(&self) -> Option<SessionFork> {
        None
    }
    /// Why `model` cannot name one of this CLI's models whatever it offers (`None`: it may).
    fn model_name_problem(&self, model: &str) -> Option<String> {
        let _ = model;
        None
    }
    /// The file this CLI keeps session `session` of a round in `worktree` in, given the
    /// round's environment (`HOME` and the like); `None` when no one file tells. A session a
    /// round named up front is only saved once the CLI wrote it: a round killed at once can
    /// leave a name with nothing behind it.
    fn session_file(
        &self,
        env: &BTreeMap<String, String>,
        worktree: &Path,
        session: &str,
    ) -> Option<PathBuf> {
        let _ = (env, worktree, session);
        None
    }
    /// How this CLI's sessions go to another host when they live in its own database;
    /// `None`: in the file [`Adapter::session_file`] names, or not at all.
    fn session_carrier(&self) -> Option<SessionCarrier> {
        None
    }
    /// How to find the session this CLI saved for a round that named none in its stream (its
    /// host died before the agent's first event); `None` when the CLI cannot be asked.
    fn session_finder(&self) -> Option<SessionFinder> {
        None
    }
    /// The command that starts this agent kept warm, speaking its [`Adapter::warm_protocol`]
    /// on its stdin and stdout, for rounds like `request` (its session, prompt
    /// and permission are the warm host's to give per turn; its model, settings and
    /// environment are the process's); `None` when ganger has no warm mode for this CLI. The
    /// agent must ask the client before every tool call that edits, runs or fetches: ganger
    /// decides each from the round's policy.
    fn warm_plan(&self) -> Option<WarmPlan> {
        None
    }
    /// The tokens of the warm agent's turn in `session` that began at `since_ms` (milliseconds
    /// since the epoch), from the agent's own records, for an agent whose answer over ACP does
    /// not hold them all; `None` to take the answer's. `env` is the agent's environment.
    fn warm_turn_usage(
        &self,
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        session: &str,
        since_ms: u64,
    ) -> Option<ganger_events::Usage> {
        let _ = (env, session, since_ms);
        None
    }
    /// Which of the warm agent's failed tool calls are its own guard refusing the call (a
    /// path outside its workspace), told by the call's text: a refusal fails the round, as
    /// it does cold. `None`: the agent asks ganger instead of refusing on its own.
    fn warm_refusal(&self) -> Option<crate::acp::Refusal> {
        None
    }
    /// Whether the agent kept warm can load a session it is not in (ACP's `session/load`):
    /// when not, a round that continues another session than the live one needs another
    /// warm process (or runs cold).
    fn warm_loads_sessions(&self) -> bool {
        self.warm_protocol() != WarmProtocol::StreamJsonControl
    }
    /// Whether this agent's tasks are warm unless `--cold` or `[warm] default` says otherwise:
    /// its warm mode passes every scenario of the conformance suite (docs/agents.md's warm column).
    fn warm_by_default(&self) -> bool {
        false
    }
    /// How ganger speaks to this agent kept warm.
    fn warm_protocol(&self) -> WarmProtocol {
        WarmProtocol::Acp
    }
    /// The reader of a warm round's stream.
    fn warm_stream_parser(&self) -> Box<dyn StreamParser> {
        match self.warm_protocol() {
            WarmProtocol::Acp => Box::new(crate::acp::AcpStream::new(self.warm_refusal())),
            WarmProtocol::StreamJsonControl => {
                Box::new(crate::acp::GangerLines::new(self.stream_parser()))
            }
            WarmProtocol::AppServer => Box::new(crate::acp::GangerLines::listing_denials(
                self.stream_parser(),
            )),
        }
    }
    /// Whether a warm round run with `permission`, in ganger's sandbox or not, is done. In a
    /// read-only round a refused call is the guard doing what was asked, and the round is
    /// judged on the rest; in ganger's sandbox a refusal by the agent's own guard counts as
    /// the sandbox's would, a tool's error ([`crate::acp::without_own_guards`]), while
    /// ganger's own refusals (its `[permissions]` rules) count everywhere.
    fn warm_verdict(
        &self,
        summary: &RoundSummary,
        exit: AgentExit,
        permission: Permission,
        sandboxed: bool,
    ) -> Verdict {
        let boxed;
        let summary = if sandboxed {
            boxed = crate::acp::without_own_guards(summary);
            &boxed
        } else {
            summary
        };
        let guarded = permission == Permission::ReadOnly;
        match self.warm_protocol() {
            WarmProtocol::Acp => crate::acp::verdict(summary, exit, guarded),
            WarmProtocol::StreamJsonControl | WarmProtocol::AppServer => {
                crate::acp::guarded_verdict(summary, exit, guarded, |s, e| self.verdict(s, e))
            }
        }
    }
    /// A project file this CLI rewrites for itself when it starts (not the task's work),
    /// which ganger takes back at the round's end; `None` for a CLI that leaves the project's
    /// files alone.
    fn own_edit(&self) -> Option<crate::OwnEdit> {
        None
    }
    /// How to point this agent at a scripted model server listening at `base_url`
    /// (`http://127.0.0.1:PORT`, no path).
    fn scripted_endpoint(&self, base_url: &str) -> ScriptedEndpoint;
    /// Where the agent sends its model requests with this environment, `ganger.toml`'s
    /// configuration table for it and this model, and the setting that sends them to the
    /// model gateway; `None` when ganger does not know it (the `command` agent).
    fn model_route(
        &self,
        _env: &BTreeMap<String, String>,
        _config: Option<&serde_json::Value>,
        _model: Option<&str>,
    ) -> Option<crate::ModelRoute> {
        None
    }
    /// How `ganger init --supervisor` registers ganger's MCP server with this agent and
    /// teaches it the supervise loop; `None` for an agent that cannot supervise.
    fn mcp_registration(&self) -> Option<&'static dyn crate::mcp_registration::McpRegistration> {
        None
    }
}

/// `path` as Claude Code and Qwen Code name a project's directory: every character other than
/// an ASCII letter or digit as `-`.
pub(crate) fn dashed(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The longest session id ganger makes a file name of.
const LONGEST_SESSION_NAME: usize = 200;

/// Whether `session` may name a file: what the agents make (UUIDs, `ses_...`) and nothing that
/// could leave a directory or be taken for an option. A session id read from a store that
/// another process may have written is checked with this before it becomes part of a path.
pub fn is_session_name(session: &str) -> bool {
    (1..=LONGEST_SESSION_NAME).contains(&session.len())
        && !session.starts_with(['-', '.'])
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

#[cfg(test)]
mod session_name_tests {
    use super::is_session_name;

    #[test]
    fn session_ids_of_the_agents_are_names_and_paths_are_not() {
        for ok in [
            "0b6f7f9e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
            "ses_3f2a1b0c9d8e7f6a5b4c3d2e1f",
            "019a2b3c-thread.v1",
        ] {
            assert!(is_session_name(ok), "{ok}");
        }
        for bad in [
            "",
            "../../../../home/user/.bashrc",
            "a/b",
            "..",
            ".hidden",
            "--dangerously-skip-permissions",
            "x\0y",
            "a b",
            &"x".repeat(201),
        ] {
            assert!(!is_session_name(bad), "{bad:?}");
        }
    }
}
