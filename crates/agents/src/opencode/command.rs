//! OpenCode's command line for one round. The prompt goes on stdin: as an argument with
//! spaces it would reach the model wrapped in literal quotes (FACTS.md). `PWD` is set to the
//! worktree, because OpenCode takes its working directory from `$PWD`, not from the real cwd.
//! Self-update is off so that the tested version stays the one that runs, and configuration
//! from `ganger.toml` is merged over whatever `OPENCODE_CONFIG_CONTENT` the user already has.

use crate::Headless;
use crate::adapter::{CommandPlan, Permission, PlanError, RoundRequest, ScriptedEndpoint};
use serde_json::{Map, Value, json};

/// The variable OpenCode reads inline JSON configuration from (highest precedence but one).
pub const CONFIG_CONTENT_ENV: &str = "OPENCODE_CONFIG_CONTENT";

/// What makes [`plan`]'s command headless, taken out of it for the CLI's interactive
/// interface.
pub(super) const HEADLESS_OPTIONS: Headless = Headless {
    leading: &["run"],
    flags: &[],
    valued: &["--format", "--title"],
    joined: &[],
    trailing: None,
};

/// The command for one round.
pub fn plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut args: Vec<String> = vec!["run".into(), "--format".into(), "json".into()];
    match request.session {
        Some(session) => args.extend(["--session".into(), session.to_owned()]),
        None => args.extend(["--title".into(), request.title.to_owned()]),
    }
    if let Some(model) = request.model {
        args.extend(["--model".into(), model.to_owned()]);
    }
    let mut env = vec![
        (
            "PWD".to_owned(),
            request.worktree.to_string_lossy().into_owned(),
        ),
        ("OPENCODE_DISABLE_AUTOUPDATE".to_owned(), "1".to_owned()),
    ];
    if let Some(config) = merged_config(request)? {
        env.push((CONFIG_CONTENT_ENV.to_owned(), config));
    }
    match (request.permission, request.sandboxed) {
        // Highest precedence of OpenCode's layers: `deny` withholds the tools from the model.
        (Permission::ReadOnly, _) => env.push((PERMISSION_ENV.to_owned(), READ_ONLY.to_owned())),
        // In ganger's sandbox the sandbox is the boundary: OpenCode would otherwise ask (and,
        // headless, refuse) before touching any path outside the worktree.
        (Permission::Write, true) => env.push((PERMISSION_ENV.to_owned(), SANDBOXED.to_owned())),
        (Permission::Write, false) => {}
    }
    Ok(CommandPlan::new(
        args,
        env,
        Some(request.prompt.as_bytes().to_vec()),
    ))
}

/// OpenCode kept warm: `opencode acp`, with the round's environment and settings, the model
/// in its configuration (ACP has no `--model`), and every edit, command, fetch and path
/// outside the worktree set to `ask`, so that each reaches ganger as a permission request
/// (docs/agents/acp-measured.md). The prompt and the session go over the protocol.
pub fn warm_plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let cold = plan(request)?;
    let mut env: Vec<(String, String)> = cold
        .env
        .into_iter()
        .filter(|(key, _)| key != PERMISSION_ENV && key != CONFIG_CONTENT_ENV)
        .collect();
    let mut config = match merged_config(request)? {
        Some(text) => serde_json::from_str::<Value>(&text).unwrap_or_else(|_| json!({})),
        None => match request.inherited_config {
            Some(text) => serde_json::from_str::<Value>(text).unwrap_or_else(|_| json!({})),
            None => json!({}),
        },
    };
    if let (Some(model), Some(map)) = (request.model, config.as_object_mut()) {
        map.insert("model".into(), Value::String(model.to_owned()));
    }
    // A call ganger refuses comes back to the model as the tool's error, which it answers,
    // as a call OpenCode's own rules deny does cold: without this OpenCode ends the turn at
    // the first refusal, with no answer (measured with 1.18.33; docs/agents/acp-measured.md).
    if let Some(experimental) = config
        .as_object_mut()
        .map(|map| map.entry("experimental").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    {
        experimental
            .entry("continue_loop_on_deny")
            .or_insert(Value::Bool(true));
    }
    // OpenCode's own snapshots (a git copy of the worktree at every step, for its undo) come
    // on top of ganger's: off, a warm round took 115 ms instead of 199 (bench/warm.py, 7
    // runs, 2026-12-02). A user's own `snapshot` setting is kept.
    if let Some(map) = config.as_object_mut() {
        map.entry("snapshot").or_insert(Value::Bool(false));
    }
    if config.as_object().is_some_and(|map| !map.is_empty()) {
        env.push((CONFIG_CONTENT_ENV.to_owned(), config.to_string()));
    }
    // A read-only task's agent is not offered the tools it may not use (as cold); the rest
    // it asks ganger about.
    let permissions = match request.permission {
        Permission::ReadOnly => WARM_READ_ONLY,
        _ => WARM,
    };
    env.push((PERMISSION_ENV.to_owned(), permissions.to_owned()));
    Ok(CommandPlan::new(vec!["acp".into()], env, None))
}

/// Kept warm: OpenCode asks before every call that changes or reaches out; ganger answers.
const WARM: &str =
    r#"{"edit":"ask","bash":"ask","webfetch":"ask","external_directory":"ask","doom_loop":"ask"}"#;

/// Kept warm for a read-only task: [`READ_ONLY`]'s denials, and ganger asked about the rest.
const WARM_READ_ONLY: &str = r#"{"edit":"deny","bash":"deny","webfetch":"deny","external_directory":"ask","doom_loop":"ask"}"#;

/// The variable whose JSON OpenCode merges into its `permission` setting, over every file.
pub const PERMISSION_ENV: &str = "OPENCODE_PERMISSION";

/// Read-only: no edits, no shell, no fetching; reading tools stay.
const READ_ONLY: &str = r#"{"edit":"deny","bash":"deny","webfetch":"deny"}"#;

/// Write access in ganger's sandbox: what the sandbox shows, OpenCode may touch.
const SANDBOXED: &str = r#"{"external_directory":"allow"}"#;

/// OpenCode pointed at a scripted server: a provider `mock` through the bundled
/// OpenAI-compatible package, with prices so that its cost figure is exercised. A dry run
/// reaches nothing but the scripted server: no models.dev list, and npm offline, so that
/// OpenCode's background install of its plugin package (into a config directory without it,
/// as the demo's is) fails at once instead of downloading tens of megabytes from npm.
pub fn scripted_endpoint(base_url: &str) -> ScriptedEndpoint {
    ScriptedEndpoint {
        model: "mock/scripted".into(),
        env: vec![
            ("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into()),
            ("npm_config_offline".into(), "true".into()),
        ],
        config: Some(json!({
            "model": "mock/scripted",
            "small_model": "mock/scripted",
            "share": "disabled",
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": format!("{base_url}/v1"), "apiKey": "scripted-model-key"},
                "models": {"scripted": {
                    "limit": {"context": 128000, "output": 8192},
                    "cost": {"input": 3, "output": 15}
                }}
            }}
        })),
    }
}

/// The user's inline configuration with `ganger.toml`'s merged over it, or `None` when
/// ganger has nothing to add.
fn merged_config(request: &RoundRequest<'_>) -> Result<Option<String>, PlanError> {
    let mut merged = match request.inherited_config {
        Some(text) if !text.trim().is_empty() => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(PlanError::InheritedConfig {
                    name: CONFIG_CONTENT_ENV,
                    reason: "it is JSON but not an object".into(),
                });
            }
            Err(e) => {
                return Err(PlanError::InheritedConfig {
                    name: CONFIG_CONTENT_ENV,
                    reason: e.to_string(),
                });
            }
        },
        _ => Map::new(),
    };
    let Some(Value::Object(overlay)) = request.config else {
        return Ok(None);
    };
    if overlay.is_empty() {
        return Ok(None);
    }
    crate::json_merge::deep_merge(&mut merged, overlay);
    Ok(Some(Value::Object(merged).to_string()))
}

/// OpenCode's route to its model: the provider of the model (`PROVIDER/MODEL`, from the round
/// or the configuration), whose `options.baseURL` and `options.apiKey` are set in its
/// configuration; the base URL is the one configured (`ganger.toml`'s table, then the
/// inherited `OPENCODE_CONFIG_CONTENT`) or the provider's usual one.
pub fn model_route(
    env: &std::collections::BTreeMap<String, String>,
    config: Option<&Value>,
    model: Option<&str>,
) -> Option<crate::ModelRoute> {
    use crate::model_route::{config_string, known_provider_url};
    let inherited = env
        .get("OPENCODE_CONFIG_CONTENT")
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    let model = model
        .or_else(|| config_string(config, &["model"]))
        .or_else(|| config_string(inherited.as_ref(), &["model"]))?;
    let (provider, _) = model.split_once('/')?;
    let path = ["provider", provider, "options", "baseURL"];
    let upstream = config_string(config, &path)
        .or_else(|| config_string(inherited.as_ref(), &path))
        .or_else(|| known_provider_url(provider))?;
    let setting = |last: &str| {
        crate::RouteSetting::Config(
            ["provider", provider, "options", last]
                .map(String::from)
                .to_vec(),
        )
    };
    Some(crate::ModelRoute {
        provider: provider.to_owned(),
        upstream: upstream.to_owned(),
        base_url: setting("baseURL"),
        key_env: None,
        key: Some(setting("apiKey")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    static NO_ENV: std::sync::LazyLock<std::collections::BTreeMap<String, String>> =
        std::sync::LazyLock::new(Default::default);

    fn request<'a>(
        session: Option<&'a str>,
        config: Option<&'a Value>,
        inherited: Option<&'a str>,
    ) -> RoundRequest<'a> {
        RoundRequest {
            resume_at: None,
            permission: Permission::Write,
            new_session_id: "00000000-0000-4000-8000-000000000000",
            sandboxed: false,
            env: &NO_ENV,
            agent_dir: Path::new("/work/site/.ganger/agents/opencode"),
            prompt: "  -starts with a dash, \"quoted\"\nand two lines ",
            session,
            title: "fix-typo",
            model: Some("mock/scripted"),
            worktree: Path::new("/work/site-agent-fix-typo"),
            config,
            inherited_config: inherited,
        }
    }

    #[test]
    fn a_new_session_is_titled_and_the_prompt_goes_on_stdin_untouched() {
        let plan = plan(&request(None, None, None)).unwrap();
        assert_eq!(
            plan,
            CommandPlan {
                args: [
                    "run",
                    "--format",
                    "json",
                    "--title",
                    "fix-typo",
                    "--model",
                    "mock/scripted"
                ]
                .map(String::from)
                .to_vec(),
                env: vec![
                    ("PWD".into(), "/work/site-agent-fix-typo".into()),
                    ("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()),
                ],
                stdin: Some(b"  -starts with a dash, \"quoted\"\nand two lines ".to_vec()),
                files: vec![],
                dirs: vec![],
                session: None,
            }
        );
    }

    #[test]
    fn kept_warm_it_speaks_acp_with_the_model_in_its_config_and_asks_before_every_change() {
        let overlay = json!({"share": "disabled"});
        let plan = warm_plan(&request(Some("ses_1"), Some(&overlay), None)).unwrap();
        assert_eq!(plan.args, ["acp"]);
        assert_eq!(plan.stdin, None);
        let var = |name: &str| {
            plan.env
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let config: Value = serde_json::from_str(&var(CONFIG_CONTENT_ENV).unwrap()).unwrap();
        assert_eq!(
            config,
            json!({"share": "disabled", "model": "mock/scripted", "snapshot": false,
                   "experimental": {"continue_loop_on_deny": true}})
        );
        // A user's own choice of them is kept.
        let overlay = json!({"experimental": {"continue_loop_on_deny": false}, "snapshot": true});
        let plan = warm_plan(&request(Some("ses_1"), Some(&overlay), None)).unwrap();
        let (_, text) = plan
            .env
            .iter()
            .find(|(k, _)| k == CONFIG_CONTENT_ENV)
            .unwrap();
        let config: Value = serde_json::from_str(text).unwrap();
        assert_eq!(config["experimental"]["continue_loop_on_deny"], false);
        assert_eq!(config["snapshot"], true);
        let permission: Value = serde_json::from_str(&var(PERMISSION_ENV).unwrap()).unwrap();
        for tool in ["edit", "bash", "webfetch", "external_directory"] {
            assert_eq!(permission[tool], "ask", "{tool}");
        }
        assert_eq!(var("PWD").as_deref(), Some("/work/site-agent-fix-typo"));
    }

    #[test]
    fn read_only_denies_edits_and_the_shell_over_every_config_layer() {
        let mut request = request(None, None, None);
        request.permission = Permission::ReadOnly;
        let plan = plan(&request).unwrap();
        let (_, value) = plan.env.iter().find(|(k, _)| k == PERMISSION_ENV).unwrap();
        let value: Value = serde_json::from_str(value).unwrap();
        assert_eq!(value["edit"], "deny");
        assert_eq!(value["bash"], "deny");
        // Kept warm too: the tools are withheld, and ganger is asked about the rest.
        let plan = warm_plan(&request).unwrap();
        let (_, value) = plan.env.iter().find(|(k, _)| k == PERMISSION_ENV).unwrap();
        let value: Value = serde_json::from_str(value).unwrap();
        for tool in ["edit", "bash", "webfetch"] {
            assert_eq!(value[tool], "deny", "{tool}");
        }
        assert_eq!(value["external_directory"], "ask");
    }

    #[test]
    fn a_resumed_session_is_named_and_config_merges_over_the_users() {
        let overlay = json!({"provider": {"mock": {"options": {"baseURL": "http://127.0.0.1:1/v1"}}}, "share": "disabled"});
        let inherited = r#"{"provider":{"mock":{"npm":"@ai-sdk/openai-compatible","options":{"apiKey":"k"}}},"model":"mock/x"}"#;
        let plan = plan(&request(Some("ses_1"), Some(&overlay), Some(inherited))).unwrap();
        assert_eq!(&plan.args[3..5], ["--session", "ses_1"]);
        let (_, content) = plan
            .env
            .iter()
            .find(|(k, _)| k == CONFIG_CONTENT_ENV)
            .unwrap();
        let merged: Value = serde_json::from_str(content).unwrap();
        assert_eq!(
            merged,
            json!({
                "provider": {"mock": {"npm": "@ai-sdk/openai-compatible",
                    "options": {"apiKey": "k", "baseURL": "http://127.0.0.1:1/v1"}}},
                "model": "mock/x",
                "share": "disabled"
            })
        );
    }

    #[test]
    fn inherited_config_that_is_not_an_object_is_an_error() {
        let overlay = json!({"share": "disabled"});
        let err = plan(&request(None, Some(&overlay), Some("[1]"))).unwrap_err();
        assert!(err.to_string().contains("OPENCODE_CONFIG_CONTENT"), "{err}");
    }
}
