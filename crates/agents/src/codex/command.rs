//! Codex's command line for one round:
//!
//! ```text
//! codex exec        --json --skip-git-repo-check [-m M] -c … -          (prompt on stdin)
//! codex exec resume --json --skip-git-repo-check [-m M] -c … THREAD -
//! ```
//!
//! `-` makes Codex read the prompt from stdin, where it arrives byte for byte (measured with
//! 0.171.0: a leading dash, quotes, inner and trailing newlines and trailing spaces all
//! reached the model unchanged). Every option is a `-c key=value` override, which both forms
//! accept: no approvals (`exec` never asks anyone), Codex's own sandbox by permission, no
//! update check at startup, then `[agents.codex.config]` flattened (see `overrides.rs`), last so
//! that the user's keys win.
//!
//! Sandbox: `read-only` for [`Permission::ReadOnly`]; `workspace-write` for
//! [`Permission::Write`], except inside ganger's sandbox, where Codex's own bubblewrap would
//! have to nest in it: there `danger-full-access`, since the outer sandbox already confines
//! the agent to its worktree.
//!
//! The temporary-directory trap: Codex refuses to put its helper binaries under the temporary
//! directory, and when `CODEX_HOME` is under it every sandboxed command fails (FACTS.md §3).
//! Then the plan gives Codex a private `TMPDIR` of its own, which does not contain the home.

use crate::Headless;
use crate::adapter::{CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint};
use crate::codex::overrides;
use serde_json::json;
use std::path::{Path, PathBuf};

/// What makes [`plan`]'s command headless, taken out of it for the CLI's interactive
/// interface.
pub(super) const HEADLESS_OPTIONS: Headless = Headless {
    leading: &["exec"],
    flags: &["--json", "--skip-git-repo-check"],
    valued: &[],
    joined: &[],
    trailing: Some("-"),
};

/// The command for one round.
pub fn plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut args: Vec<String> = vec!["exec".into()];
    if request.session.is_some() {
        args.push("resume".into());
    }
    args.extend(["--json".into(), "--skip-git-repo-check".into()]);
    if let Some(model) = request.model {
        args.extend(["-m".into(), model.to_owned()]);
    }
    args.extend(["-c".into(), r#"approval_policy="never""#.to_owned()]);
    for item in settings(request)? {
        args.extend(["-c".into(), item]);
    }
    if let Some(session) = request.session {
        args.push(session.to_owned());
    }
    args.push("-".into());
    let mut plan = CommandPlan::new(args, Vec::new(), Some(request.prompt.as_bytes().to_vec()));
    if let Some(tmp) = private_tmp(request) {
        plan.env
            .push(("TMPDIR".to_owned(), tmp.to_string_lossy().into_owned()));
        plan.dirs.push(tmp);
    }
    Ok(plan)
}

/// The `-c` overrides of a round besides its approval policy (which `codex app-server` takes
/// per thread): Codex's sandbox, no update check, then `[agents.codex.config]` flattened,
/// last so that the user's keys win.
pub(crate) fn settings(request: &RoundRequest<'_>) -> Result<Vec<String>, PlanError> {
    let mut settings = vec![
        format!(r#"sandbox_mode="{}""#, sandbox_mode(request)),
        "check_for_update_on_startup=false".to_owned(),
    ];
    if let Some(config) = request.config {
        settings.extend(
            overrides::flatten(config).map_err(|reason| PlanError::Config {
                agent: "codex",
                reason,
            })?,
        );
    }
    Ok(settings)
}

/// Codex's `sandbox_mode` for the round's permission.
fn sandbox_mode(request: &RoundRequest<'_>) -> &'static str {
    match (request.permission, request.sandboxed) {
        (Permission::ReadOnly, _) => "read-only",
        (Permission::Write, true) => "danger-full-access",
        (Permission::Write, false) => "workspace-write",
    }
}

/// Codex's home in the agent's environment: `CODEX_HOME`, else `$HOME/.codex`.
pub fn codex_home(request: &RoundRequest<'_>) -> Option<PathBuf> {
    match request.var("CODEX_HOME") {
        Some(home) => Some(PathBuf::from(home)),
        None => request
            .var("HOME")
            .map(|home| Path::new(home).join(".codex")),
    }
}

/// A temporary directory for Codex when its home is under the one it would use (`TMPDIR`,
/// else `/tmp`); `None` when there is no trap.
pub fn private_tmp(request: &RoundRequest<'_>) -> Option<PathBuf> {
    let home = codex_home(request)?;
    let tmp = Path::new(request.var("TMPDIR").unwrap_or("/tmp"));
    if !home.starts_with(tmp) {
        return None;
    }
    let private = request.agent_dir.join("tmp");
    (!home.starts_with(&private)).then_some(private)
}

/// Codex pointed at a scripted server: a Responses provider `scripted` with one retry at
/// most, and `gpt-5.5`, a model Codex knows, so that it offers `apply_patch`.
pub fn scripted_endpoint(base_url: &str) -> ScriptedEndpoint {
    ScriptedEndpoint {
        model: "gpt-5.5".into(),
        env: vec![(SCRIPTED_KEY_ENV.into(), "scripted-model-key".into())],
        config: Some(json!({
            "model_provider": "scripted",
            "model_providers": {"scripted": {
                "name": "Scripted",
                "base_url": format!("{base_url}/v1"),
                "wire_api": "responses",
                "env_key": SCRIPTED_KEY_ENV,
                "request_max_retries": 1,
                "stream_max_retries": 1
            }}
        })),
    }
}

/// The variable the scripted provider's key is read from.
const SCRIPTED_KEY_ENV: &str = "SCRIPTED_MODEL_KEY";

/// Codex's route to its model: the configured provider's `base_url` when `ganger.toml`'s
/// table names one (`model_provider` and `model_providers.NAME.base_url`), else the built-in
/// OpenAI provider, whose base URL is `OPENAI_BASE_URL`.
pub fn model_route(
    env: &std::collections::BTreeMap<String, String>,
    config: Option<&serde_json::Value>,
) -> crate::ModelRoute {
    use crate::model_route::config_string;
    let provider = config_string(config, &["model_provider"]);
    let configured = provider.and_then(|name| {
        let url = config_string(config, &["model_providers", name, "base_url"])?;
        Some((name, url))
    });
    match configured {
        Some((name, url)) => crate::ModelRoute {
            provider: name.to_owned(),
            upstream: url.to_owned(),
            base_url: crate::RouteSetting::Config(
                ["model_providers", name, "base_url"]
                    .map(String::from)
                    .to_vec(),
            ),
            key_env: config_string(config, &["model_providers", name, "env_key"])
                .map(str::to_owned),
            key: None,
        },
        None => crate::model_route::env_route(
            "openai",
            "OPENAI_BASE_URL",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            env,
        ),
    }
}
