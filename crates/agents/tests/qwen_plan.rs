//! Qwen Code's command for a round: new, resumed, read-only, a long prompt, and the settings
//! file it reads instead of the user's; and its place among the adapters.
#![cfg(test)]

use ganger_agents::qwen::command::PROMPT_ARG_LIMIT;
use ganger_agents::{CommandPlan, Permission, RoundRequest, adapter};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PROMPT: &str = "-starts with a dash, \"quoted\"\nsecond line ";
const AGENT_DIR: &str = "/work/site/.ganger/agents/qwen";

fn request<'a>(env: &'a BTreeMap<String, String>) -> RoundRequest<'a> {
    RoundRequest {
        resume_at: None,
        prompt: PROMPT,
        session: None,
        new_session_id: "00000000-0000-4000-8000-000000000000",
        title: "fix-typo",
        model: Some("qwen-fake"),
        worktree: Path::new("/work/site-agent-fix-typo"),
        config: None,
        inherited_config: None,
        permission: Permission::Write,
        sandboxed: false,
        env,
        agent_dir: Path::new(AGENT_DIR),
    }
}

fn plan(request: &RoundRequest<'_>) -> CommandPlan {
    adapter("qwen").unwrap().plan(request).unwrap()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The settings file the plan writes, read back.
fn settings(plan: &CommandPlan) -> Value {
    let path = PathBuf::from(AGENT_DIR).join("settings.json");
    assert_eq!(
        plan.env[0],
        (
            "QWEN_CODE_SYSTEM_SETTINGS_PATH".to_owned(),
            path.to_string_lossy().into_owned()
        )
    );
    assert_eq!(plan.files.len(), 1);
    assert_eq!(plan.files[0].0, path);
    serde_json::from_str(&plan.files[0].1).unwrap()
}

#[test]
fn a_new_session_runs_in_yolo_mode_with_the_prompt_as_one_exact_argument() {
    let no_env = BTreeMap::new();
    let plan = plan(&request(&no_env));
    assert_eq!(
        plan.args,
        strings(&[
            "--output-format",
            "stream-json",
            "-m",
            "qwen-fake",
            "--approval-mode",
            "yolo",
            &format!("--prompt={PROMPT}"),
        ])
    );
    assert_eq!(plan.stdin, None);
    assert!(plan.dirs.is_empty());
    assert_eq!(
        settings(&plan),
        json!({"$version": 4, "general": {"enableAutoUpdate": false}})
    );
    // Qwen runs in one process of its CLI, not relaunching itself; Qwen 0.24's warning about
    // yolo mode would be the last line of every round's stderr.
    assert_eq!(
        plan.env[1..],
        [
            ("QWEN_CODE_NO_RELAUNCH".to_owned(), "true".to_owned()),
            ("QWEN_CODE_SUPPRESS_YOLO_WARNING".to_owned(), "1".to_owned())
        ]
    );
}

#[test]
fn a_resumed_read_only_session() {
    let no_env = BTreeMap::new();
    let mut request = request(&no_env);
    request.session = Some("4cf6ac41-8ab6-4119-a48d-e23b252c7217");
    request.model = None;
    request.permission = Permission::ReadOnly;
    request.sandboxed = true;
    assert!(
        !plan(&request)
            .env
            .iter()
            .any(|(key, _)| key == "QWEN_CODE_SUPPRESS_YOLO_WARNING"),
        "no yolo, no warning to silence"
    );
    assert_eq!(
        plan(&request).args,
        strings(&[
            "--output-format",
            "stream-json",
            "--resume",
            "4cf6ac41-8ab6-4119-a48d-e23b252c7217",
            "--approval-mode",
            "default",
            &format!("--prompt={PROMPT}"),
        ])
    );
}

#[test]
fn a_prompt_too_long_for_one_argument_goes_on_stdin() {
    let no_env = BTreeMap::new();
    let long = "x".repeat(PROMPT_ARG_LIMIT + 1);
    let mut request = request(&no_env);
    request.prompt = &long;
    let plan = plan(&request);
    assert!(!plan.args.iter().any(|a| a.starts_with("--prompt")));
    assert_eq!(plan.stdin.as_deref(), Some(long.as_bytes()));
    let just_fits = "x".repeat(PROMPT_ARG_LIMIT);
    request.prompt = &just_fits;
    assert_eq!(self::plan(&request).stdin, None);
}

#[test]
fn an_openai_endpoint_selects_openai_auth_and_config_merges_over_gangers_settings() {
    let users = BTreeMap::from([(
        "OPENAI_BASE_URL".to_owned(),
        "http://127.0.0.1:4000/v1".to_owned(),
    )]);
    let mut request = request(&users);
    assert_eq!(
        settings(&plan(&request)),
        json!({"$version": 4, "general": {"enableAutoUpdate": false},
               "security": {"auth": {"selectedType": "openai"}}})
    );
    let config = json!({"general": {"enableAutoUpdate": true, "vimMode": false},
                        "security": {"auth": {"selectedType": "qwen-oauth"}}});
    request.config = Some(&config);
    assert_eq!(
        settings(&plan(&request)),
        json!({"$version": 4, "general": {"enableAutoUpdate": true, "vimMode": false},
               "security": {"auth": {"selectedType": "qwen-oauth"}}})
    );
    let text = json!("no");
    request.config = Some(&text);
    let err = adapter("qwen").unwrap().plan(&request).unwrap_err();
    assert!(err.to_string().contains("[agents.qwen.config]"), "{err}");
}

#[test]
fn qwen_is_known_reads_its_version_and_points_at_a_scripted_server() {
    let qwen = adapter("qwen").unwrap();
    assert_eq!(qwen.program(), "qwen");
    assert_eq!(
        qwen.parse_version("0.24.4\n").as_deref(),
        Some(qwen.tested_version())
    );
    assert_eq!(qwen.models_args(), None);
    assert_eq!(qwen.linger(), Some(std::time::Duration::from_secs(3)));
    let endpoint = qwen.scripted_endpoint("http://127.0.0.1:4000");
    assert_eq!(endpoint.model, "qwen-fake");
    for pair in [
        ("OPENAI_BASE_URL", "http://127.0.0.1:4000/v1"),
        ("OPENAI_MODEL", "qwen-fake"),
    ] {
        assert!(
            endpoint
                .env
                .contains(&(pair.0.to_owned(), pair.1.to_owned())),
            "{pair:?}"
        );
    }
    // The scripted endpoint's env and config, fed back into a plan, select OpenAI auth.
    let env: BTreeMap<String, String> = endpoint.env.iter().cloned().collect();
    let mut request = request(&env);
    request.config = endpoint.config.as_ref();
    assert_eq!(
        settings(&plan(&request))["security"]["auth"]["selectedType"],
        "openai"
    );
}

#[test]
fn kept_warm_a_read_only_task_has_its_writing_tools_taken_out_and_the_users_denials_kept() {
    let no_env = BTreeMap::new();
    let warm = adapter("qwen").unwrap().warm_plan().unwrap();
    let write = warm(&request(&no_env)).unwrap();
    assert_eq!(settings(&write).get("permissions"), None);
    let user = json!({"permissions": {"deny": ["web_fetch", "glob"]}});
    let mut read_only = request(&no_env);
    read_only.permission = Permission::ReadOnly;
    read_only.config = Some(&user);
    let plan = warm(&read_only).unwrap();
    assert_eq!(
        settings(&plan)["permissions"]["deny"],
        json!([
            "web_fetch",
            "glob",
            "edit",
            "write_file",
            "notebook_edit",
            "run_shell_command"
        ])
    );
}

#[test]
fn a_session_is_kept_under_the_runtime_dir_by_its_worktree() {
    let qwen = ganger_agents::adapter("qwen").unwrap();
    let worktree = std::path::Path::new("/tmp/ganger-test.x/repo-agent-k");
    let env = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    let file = |pairs: &[(&str, &str)]| qwen.session_file(&env(pairs), worktree, "s-1");
    assert_eq!(
        file(&[("HOME", "/home/me")]),
        Some("/home/me/.qwen/projects/-tmp-ganger-test-x-repo-agent-k/chats/s-1.jsonl".into())
    );
    assert_eq!(
        file(&[("HOME", "/home/me"), ("QWEN_HOME", "/q")]),
        Some("/q/projects/-tmp-ganger-test-x-repo-agent-k/chats/s-1.jsonl".into())
    );
    assert_eq!(
        file(&[("QWEN_HOME", "/q"), ("QWEN_RUNTIME_DIR", "/run/q")]),
        Some("/run/q/projects/-tmp-ganger-test-x-repo-agent-k/chats/s-1.jsonl".into())
    );
    // A relative directory is the agent's to resolve: no guess.
    assert_eq!(file(&[("HOME", "/home/me"), ("QWEN_HOME", "rel")]), None);
    assert_eq!(file(&[]), None);
    // A session id read from the store that is no name makes no path.
    for bad in ["../../../.bashrc", "a/b", ".."] {
        assert_eq!(
            qwen.session_file(&env(&[("HOME", "/home/me")]), worktree, bad),
            None,
            "{bad}"
        );
    }
}
