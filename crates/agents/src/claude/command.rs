//! Claude Code's command line for one round.
//!
//! - `-p --output-format stream-json --verbose`: headless, one JSON event per line (`--verbose`
//!   is required with stream-json).
//! - `--resume ID` continues a session; Claude finds sessions by working directory, and ganger
//!   runs every round of a task in the same worktree. There is no title option. A new session
//!   is named up front (`--session-id UUID`): Claude saves it with the prompt before the model
//!   answers, so even a round whose host died before the first event can be continued.
//! - The prompt always goes on stdin: `--allowedTools` and `--disallowedTools` take any number
//!   of values and would swallow a prompt given after them.
//! - Permissions ([`Permission`]): write without a sandbox accepts edits and allows the shell;
//!   write in a sandbox bypasses permissions, which Claude refuses as root unless `IS_SANDBOX=1`
//!   (set then only); read-only withholds the writing tools and the shell.
//! - `DISABLE_AUTOUPDATER=1` keeps the tested version the one that runs; retries are bounded
//!   (`CLAUDE_CODE_MAX_RETRIES=2`, ten by default: 176 s against a failing server) unless the
//!   user set their own.
//! - `[agents.claude.config]` from `ganger.toml` is passed as `--settings <json>`.

use crate::Headless;
use crate::adapter::{CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint};
use serde_json::Value;

/// The variable bounding Claude's retries of a failed API request.
pub const MAX_RETRIES_ENV: &str = "CLAUDE_CODE_MAX_RETRIES";

/// ganger's bound when the user sets none: a failing API fails the round in seconds.
const MAX_RETRIES: &str = "2";

/// The tools a read-only round withholds: every tool that writes files, and the shell.
const WRITING_TOOLS: [&str; 5] = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"];

/// How every headless round's command line starts.
pub(super) const HEADLESS: [&str; 4] = ["-p", "--output-format", "stream-json", "--verbose"];

/// What makes [`plan`]'s command headless, taken out of it for the CLI's interactive
/// interface.
pub(super) const HEADLESS_OPTIONS: Headless = Headless {
    leading: &[],
    flags: &["-p", "--verbose"],
    valued: &["--output-format"],
    joined: &[],
    trailing: None,
};

/// The command for one round.
pub fn plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut args: Vec<String> = HEADLESS.map(String::from).to_vec();
    let named = request.session.is_none();
    if named {
        // Named up front: Claude writes the session (the prompt in it) before the model
        // answers, so a round killed before its first event can still be resumed.
        args.extend(["--session-id".into(), request.new_session_id.to_owned()]);
    }
    if let Some(session) = request.session {
        args.extend(["--resume".into(), session.to_owned()]);
        if let Some(at) = request.resume_at {
            // A rewind: the session up to round N's last answer, continued as a new session.
            args.extend([
                "--resume-session-at".into(),
                at.to_owned(),
                "--fork-session".into(),
            ]);
        }
    }
    if let Some(model) = request.model {
        args.extend(["--model".into(), model.to_owned()]);
    }
    if let Some(settings) = settings(request.config)? {
        args.extend(["--settings".into(), settings]);
    }
    let mut env = vec![("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned())];
    if request.var(MAX_RETRIES_ENV).is_none() {
        env.push((MAX_RETRIES_ENV.to_owned(), MAX_RETRIES.to_owned()));
    }
    // The permission options come last: the tool lists take every value that follows them.
    match (request.permission, request.sandboxed) {
        (Permission::Write, false) => {
            args.extend(
                ["--permission-mode", "acceptEdits", "--allowedTools", "Bash"].map(String::from),
            );
        }
        (Permission::Write, true) => {
            args.extend(["--permission-mode", "bypassPermissions"].map(String::from));
            env.push(("IS_SANDBOX".to_owned(), "1".to_owned()));
        }
        (Permission::ReadOnly, _) => {
            args.extend(["--permission-mode", "default", "--disallowedTools"].map(String::from));
            args.extend(WRITING_TOOLS.map(String::from));
        }
    }
    let mut plan = CommandPlan::new(args, env, Some(request.prompt.as_bytes().to_vec()));
    if named {
        plan.session = Some(request.new_session_id.to_owned());
    }
    Ok(plan)
}

/// `ganger.toml`'s table as compact JSON for `--settings`, or `None` when there is nothing.
fn settings(config: Option<&Value>) -> Result<Option<String>, PlanError> {
    match config {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(table)) if table.is_empty() => Ok(None),
        Some(table @ Value::Object(_)) => Ok(Some(table.to_string())),
        Some(_) => Err(PlanError::Config {
            agent: "claude",
            reason: "it must be a table of Claude Code settings".into(),
        }),
    }
}

/// Claude Code pointed at a scripted server: it speaks the Anthropic Messages API there, and
/// passes any model name through.
pub fn scripted_endpoint(base_url: &str) -> ScriptedEndpoint {
    ScriptedEndpoint {
        model: "claude-fake".into(),
        env: [
            ("ANTHROPIC_BASE_URL", base_url),
            ("ANTHROPIC_API_KEY", "scripted-model-key"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .to_vec(),
        config: None,
    }
}
