//! Qwen Code's command line for one round.
//!
//! - `--output-format stream-json`: headless, Claude-compatible JSON events, one per line.
//! - `--resume ID` continues a session; `-m MODEL` picks the model. No title option exists.
//! - Permissions ([`Permission`]): write is `--approval-mode yolo` (edits and the shell without
//!   asking); read-only is `--approval-mode default`, in which headless Qwen withholds its
//!   writing tools and the shell from the model. Qwen 0.24 warns on stderr at every yolo
//!   start that tools run unsandboxed; `QWEN_CODE_SUPPRESS_YOLO_WARNING=1` silences it (ganger
//!   decides the sandbox, and a round's stderr is kept for its failures).
//! - The prompt goes as `--prompt=TEXT`, the one way measured to reach the model exactly
//!   (docs/agents/qwen-prompt.md): a positional prompt that starts with `-` is read as an
//!   option and one after `--` is dropped, and a prompt on stdin reaches the model with two
//!   newlines appended. A prompt too long for one argument goes on stdin all the same.
//! - `QWEN_CODE_NO_RELAUNCH=true` ([`NO_RELAUNCH_ENV`]): Qwen runs in one process, not
//!   two (it starts itself again with a heap of half the machine's memory, as Gemini CLI
//!   does; docs/agents/relaunch.md).
//! - Settings (auto-update off, the OpenAI endpoint's auth type, `ganger.toml`'s table) go in
//!   a file in the agent's directory (see [`super::settings`]).

use crate::Headless;
use crate::adapter::{CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint};
use crate::qwen::settings;
use serde_json::json;

/// The variable that silences Qwen 0.24's stderr warning about yolo mode without a sandbox.
pub const YOLO_WARNING_ENV: &str = "QWEN_CODE_SUPPRESS_YOLO_WARNING";

/// The variable that keeps Qwen Code from starting itself a second time.
pub const NO_RELAUNCH_ENV: &str = "QWEN_CODE_NO_RELAUNCH";

/// The longest prompt passed as an argument, in bytes: Linux refuses a single argument over
/// 128 KiB.
pub const PROMPT_ARG_LIMIT: usize = 100 * 1024;

/// What makes [`plan`]'s command headless, taken out of it for the CLI's interactive
/// interface.
pub(super) const HEADLESS_OPTIONS: Headless = Headless {
    leading: &[],
    flags: &[],
    valued: &["--output-format"],
    joined: &["--prompt="],
    trailing: None,
};

/// The command for one round.
pub fn plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut args: Vec<String> = vec!["--output-format".into(), "stream-json".into()];
    if let Some(session) = request.session {
        args.extend(["--resume".into(), session.to_owned()]);
    }
    if let Some(model) = request.model {
        args.extend(["-m".into(), model.to_owned()]);
    }
    let mode = match request.permission {
        Permission::Write => "yolo",
        Permission::ReadOnly => "default",
    };
    args.extend(["--approval-mode".into(), mode.into()]);
    let stdin = if request.prompt.len() <= PROMPT_ARG_LIMIT {
        args.push(format!("--prompt={}", request.prompt));
        None
    } else {
        Some(request.prompt.as_bytes().to_vec())
    };
    let settings_path = request.agent_dir.join(settings::FILE_NAME);
    let mut env = vec![
        (
            settings::SYSTEM_SETTINGS_ENV.to_owned(),
            settings_path.to_string_lossy().into_owned(),
        ),
        (NO_RELAUNCH_ENV.to_owned(), "true".to_owned()),
    ];
    if request.permission == Permission::Write {
        env.push((YOLO_WARNING_ENV.to_owned(), "1".to_owned()));
    }
    let mut plan = CommandPlan::new(args, env, stdin);
    plan.files
        .push((settings_path, settings::settings(request)?));
    Ok(plan)
}

/// Qwen Code kept warm: `qwen --acp` with the round's model, settings and environment, in
/// approval mode `default`, in which ACP mode asks the client before every write and command
/// (docs/agents/acp-measured.md). Its background model requests (managed memory, follow-up
/// suggestions) are turned off: kept warm they would run between and inside rounds.
pub fn warm_plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut plan = plan(request)?;
    let mut args = vec!["--acp".to_owned()];
    if let Some(model) = request.model {
        args.extend(["-m".into(), model.to_owned()]);
    }
    args.extend(["--approval-mode".into(), "default".into()]);
    plan.args = args;
    plan.stdin = None;
    plan.env.retain(|(key, _)| key != YOLO_WARNING_ENV);
    for (_, contents) in &mut plan.files {
        if let Ok(serde_json::Value::Object(mut settings)) = serde_json::from_str(contents) {
            settings.insert(
                "memory".into(),
                json!({"enableManagedAutoMemory": false, "enableManagedAutoDream": false}),
            );
            settings.insert("ui".into(), json!({"enableFollowupSuggestions": false}));
            if request.permission == Permission::ReadOnly {
                withhold_writing_tools(&mut settings);
            }
            *contents = serde_json::Value::Object(settings).to_string();
        }
    }
    Ok(plan)
}

/// Qwen's tools that edit, run or fetch: kept warm for a read-only task they are removed
/// (`permissions.deny` takes them out of its tool registry, so a call to one is to an unknown
/// tool, as for OpenCode, Claude Code and Gemini CLI cold) rather than asked about: Qwen ends
/// its turn at a call ganger refuses, without an answer.
const WRITING_TOOLS: [&str; 5] = [
    "edit",
    "write_file",
    "notebook_edit",
    "run_shell_command",
    "web_fetch",
];

fn withhold_writing_tools(settings: &mut serde_json::Map<String, serde_json::Value>) {
    let permissions = settings.entry("permissions").or_insert_with(|| json!({}));
    if let Some(permissions) = permissions.as_object_mut() {
        let deny = permissions.entry("deny").or_insert_with(|| json!([]));
        if let Some(deny) = deny.as_array_mut() {
            for tool in WRITING_TOOLS {
                if !deny.iter().any(|d| d == tool) {
                    deny.push(json!(tool));
                }
            }
        }
    }
}

/// Qwen Code pointed at a scripted server: it speaks OpenAI Chat Completions there.
pub fn scripted_endpoint(base_url: &str) -> ScriptedEndpoint {
    ScriptedEndpoint {
        model: "qwen-fake".into(),
        env: vec![
            ("OPENAI_BASE_URL".into(), format!("{base_url}/v1")),
            ("OPENAI_API_KEY".into(), "scripted-model-key".into()),
            ("OPENAI_MODEL".into(), "qwen-fake".into()),
        ],
        config: Some(json!({"security": {"auth": {"selectedType": "openai"}}})),
    }
}
