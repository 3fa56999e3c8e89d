//! Gemini CLI's command for new, resumed and read-only rounds, and the settings file ganger
//! writes for it.
#![cfg(test)]

use ganger_agents::{CommandPlan, Permission, RoundRequest, adapter};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PROMPT: &str = "-starts with a dash, \"quoted\"\nsecond line  ";
const AGENT_DIR: &str = "/work/site/.ganger/agents/gemini";

fn request<'a>(env: &'a BTreeMap<String, String>, config: Option<&'a Value>) -> RoundRequest<'a> {
    RoundRequest {
        resume_at: None,
        prompt: PROMPT,
        session: None,
        new_session_id: "00000000-0000-4000-8000-000000000000",
        title: "fix-typo",
        model: Some("gemini-fake"),
        worktree: Path::new("/work/site-agent-fix-typo"),
        config,
        inherited_config: None,
        permission: Permission::Write,
        sandboxed: false,
        env,
        agent_dir: Path::new(AGENT_DIR),
    }
}

fn plan(request: &RoundRequest<'_>) -> CommandPlan {
    adapter("gemini").unwrap().plan(request).unwrap()
}

fn settings(plan: &CommandPlan) -> Value {
    assert_eq!(plan.files.len(), 1);
    serde_json::from_str(&plan.files[0].1).unwrap()
}

fn settings_path() -> PathBuf {
    PathBuf::from(AGENT_DIR).join("home/.gemini/settings.json")
}

#[test]
fn a_new_session_reads_the_prompt_from_stdin_with_an_empty_p() {
    let env = BTreeMap::new();
    let plan = plan(&request(&env, None));
    assert_eq!(
        plan.args,
        [
            "--output-format",
            "stream-json",
            "--skip-trust",
            "-m",
            "gemini-fake",
            "--approval-mode",
            "yolo",
            "-p",
            ""
        ]
    );
    assert_eq!(plan.stdin.as_deref(), Some(PROMPT.as_bytes()));
    // Without a custom endpoint or configuration, Gemini runs in the user's own home with
    // their own settings and login, untouched; in one process, not relaunching itself.
    let no_relaunch = ("GEMINI_CLI_NO_RELAUNCH".to_owned(), "true".to_owned());
    assert_eq!(plan.env, std::slice::from_ref(&no_relaunch));
    assert!(plan.files.is_empty());
    // With a custom endpoint it gets a home of its own, whose settings select API-key auth.
    let custom: BTreeMap<String, String> = [(
        "GOOGLE_GEMINI_BASE_URL".to_owned(),
        "http://127.0.0.1:9".to_owned(),
    )]
    .into();
    let plan = adapter("gemini")
        .unwrap()
        .plan(&request(&custom, None))
        .unwrap();
    assert_eq!(
        plan.env,
        [
            no_relaunch,
            (
                "GEMINI_CLI_HOME".to_owned(),
                PathBuf::from(AGENT_DIR)
                    .join("home")
                    .to_string_lossy()
                    .into_owned()
            )
        ]
    );
    assert_eq!(plan.files[0].0, settings_path());
    assert_eq!(
        settings(&plan),
        json!({
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false, "maxAttempts": 3},
            "security": {"auth": {"selectedType": "gemini-api-key"}}
        })
    );
}

#[test]
fn a_resumed_read_only_session_names_it_and_withholds_writing_tools() {
    let env = BTreeMap::new();
    let mut request = request(&env, None);
    request.session = Some("8bb81ce9-62f7-4e36-91cf-820ec6841ca1");
    request.permission = Permission::ReadOnly;
    request.model = None;
    let args = plan(&request).args;
    assert_eq!(
        args,
        [
            "--output-format",
            "stream-json",
            "--skip-trust",
            "--resume",
            "8bb81ce9-62f7-4e36-91cf-820ec6841ca1",
            "--approval-mode",
            "default",
            "-p",
            ""
        ]
    );
}

#[test]
fn a_custom_endpoint_selects_api_key_auth_and_config_merges_over_ganger_s_settings() {
    let gemini = adapter("gemini").unwrap();
    let endpoint = gemini.scripted_endpoint("http://127.0.0.1:4000");
    assert_eq!(endpoint.model, "gemini-fake");
    let env: BTreeMap<String, String> = endpoint.env.into_iter().collect();
    assert_eq!(env["GOOGLE_GEMINI_BASE_URL"], "http://127.0.0.1:4000");
    let config = json!({
        "general": {"enableAutoUpdate": true, "vimMode": true},
        "privacy": {"usageStatisticsEnabled": false}
    });
    let plan = plan(&request(&env, Some(&config)));
    assert_eq!(
        settings(&plan),
        json!({
            "general": {"enableAutoUpdate": true, "enableAutoUpdateNotification": false, "maxAttempts": 3, "vimMode": true},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false}
        })
    );
    let bad = json!(["not a table"]);
    assert!(gemini.plan(&request(&env, Some(&bad))).is_err());
}
