//! Claude Code's command for a round: new, resumed, read-only, sandboxed, with the user's own
//! retry bound and with settings from `ganger.toml`; and its place among the adapters.
#![cfg(test)]

use ganger_agents::{AgentExit, CommandPlan, Permission, RoundRequest, adapter};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

const PROMPT: &str = "  -starts with a dash, \"quoted\"\nand two lines ";

fn request<'a>(env: &'a BTreeMap<String, String>) -> RoundRequest<'a> {
    RoundRequest {
        resume_at: None,
        prompt: PROMPT,
        session: None,
        new_session_id: "00000000-0000-4000-8000-000000000000",
        title: "fix-typo",
        model: Some("claude-fake"),
        worktree: Path::new("/work/site-agent-fix-typo"),
        config: None,
        inherited_config: None,
        permission: Permission::Write,
        sandboxed: false,
        env,
        agent_dir: Path::new("/work/site/.ganger/agents/claude"),
    }
}

fn plan(request: &RoundRequest<'_>) -> CommandPlan {
    adapter("claude").unwrap().plan(request).unwrap()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_new_session_edits_and_runs_commands_and_the_prompt_goes_on_stdin_untouched() {
    let no_env = BTreeMap::new();
    assert_eq!(
        plan(&request(&no_env)),
        CommandPlan {
            args: strings(&[
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--session-id",
                "00000000-0000-4000-8000-000000000000",
                "--model",
                "claude-fake",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash",
            ]),
            env: env(&[
                ("DISABLE_AUTOUPDATER", "1"),
                ("CLAUDE_CODE_MAX_RETRIES", "2")
            ]),
            stdin: Some(PROMPT.as_bytes().to_vec()),
            files: vec![],
            dirs: vec![],
            // Named up front, so that a round killed before its first event can be resumed.
            session: Some("00000000-0000-4000-8000-000000000000".into()),
        }
    );
}

#[test]
fn a_resumed_session_is_named_and_the_title_is_not() {
    let no_env = BTreeMap::new();
    let mut request = request(&no_env);
    request.session = Some("0d54be32-b686-4109-b4c6-7b2b846a9fd4");
    request.model = None;
    let plan = plan(&request);
    assert_eq!(
        &plan.args[..6],
        strings(&[
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--resume",
            "0d54be32-b686-4109-b4c6-7b2b846a9fd4"
        ])
    );
    assert!(!plan.args.iter().any(|arg| arg.contains("fix-typo")));
    assert!(!plan.args.iter().any(|arg| arg == "--model"));
}

#[test]
fn read_only_withholds_the_writing_tools_and_the_shell() {
    let no_env = BTreeMap::new();
    let mut request = request(&no_env);
    request.permission = Permission::ReadOnly;
    request.sandboxed = true;
    let plan = plan(&request);
    let at = plan
        .args
        .iter()
        .position(|a| a == "--permission-mode")
        .unwrap();
    assert_eq!(
        &plan.args[at..],
        strings(&[
            "--permission-mode",
            "default",
            "--disallowedTools",
            "Write",
            "Edit",
            "MultiEdit",
            "NotebookEdit",
            "Bash"
        ])
    );
    assert!(!plan.env.iter().any(|(k, _)| k == "IS_SANDBOX"));
    assert_eq!(plan.stdin, Some(PROMPT.as_bytes().to_vec()));
}

#[test]
fn in_a_sandbox_it_bypasses_permissions_and_says_it_is_sandboxed() {
    let no_env = BTreeMap::new();
    let mut request = request(&no_env);
    request.sandboxed = true;
    let plan = plan(&request);
    assert_eq!(
        &plan.args[plan.args.len() - 2..],
        strings(&["--permission-mode", "bypassPermissions"])
    );
    assert!(plan.env.contains(&("IS_SANDBOX".into(), "1".into())));
    assert!(!plan.args.iter().any(|a| a == "--allowedTools"));
}

#[test]
fn the_users_retry_bound_is_kept() {
    let users = BTreeMap::from([("CLAUDE_CODE_MAX_RETRIES".to_owned(), "7".to_owned())]);
    let plan = plan(&request(&users));
    assert!(!plan.env.iter().any(|(k, _)| k == "CLAUDE_CODE_MAX_RETRIES"));
    assert!(
        plan.env
            .contains(&("DISABLE_AUTOUPDATER".into(), "1".into()))
    );
    // An empty value is not a bound.
    let empty = BTreeMap::from([("CLAUDE_CODE_MAX_RETRIES".to_owned(), String::new())]);
    assert!(
        self::plan(&request(&empty))
            .env
            .contains(&("CLAUDE_CODE_MAX_RETRIES".into(), "2".into()))
    );
}

#[test]
fn config_from_ganger_toml_becomes_settings_before_the_tool_lists() {
    let no_env = BTreeMap::new();
    let config = json!({"permissions": {"deny": ["WebFetch"]}, "model": "claude-sonnet-4-5"});
    let mut request = request(&no_env);
    request.config = Some(&config);
    let plan = plan(&request);
    let at = plan.args.iter().position(|a| a == "--settings").unwrap();
    let settings: Value = serde_json::from_str(&plan.args[at + 1]).unwrap();
    assert_eq!(settings, config);
    assert!(!plan.args[at + 1].contains(' '), "compact JSON");
    assert!(
        at < plan
            .args
            .iter()
            .position(|a| a == "--allowedTools")
            .unwrap()
    );

    let empty = json!({});
    request.config = Some(&empty);
    assert!(!self::plan(&request).args.iter().any(|a| a == "--settings"));
    let list = json!(["no"]);
    request.config = Some(&list);
    let err = adapter("claude").unwrap().plan(&request).unwrap_err();
    assert!(err.to_string().contains("[agents.claude.config]"), "{err}");
}

#[test]
fn claude_is_known_reads_its_version_and_has_no_model_catalog() {
    let claude = adapter("claude").unwrap();
    assert_eq!(claude.program(), "claude");
    assert_eq!(
        claude.parse_version("2.1.332 (Claude Code)\n").as_deref(),
        Some(claude.tested_version())
    );
    assert_eq!(claude.models_args(), None);
    assert_eq!(claude.inherited_config_env(), None);
    assert!(claude.config_env().contains(&"ANTHROPIC_BASE_URL"));
    assert_eq!(claude.linger(), Some(std::time::Duration::from_secs(3)));
    let endpoint = claude.scripted_endpoint("http://127.0.0.1:4000");
    assert_eq!(endpoint.model, "claude-fake");
    assert!(
        endpoint
            .env
            .contains(&("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:4000".into()))
    );
    // The adapter's verdict is the shared one.
    let summary = ganger_events::RoundSummary::default();
    assert!(!claude.verdict(&summary, AgentExit::Code(0)).done);
}

#[test]
fn a_rewound_session_resumes_up_to_a_point_as_a_fork() {
    let no_env = BTreeMap::new();
    let mut request = request(&no_env);
    request.session = Some("0d54be32-b686-4109-b4c6-7b2b846a9fd4");
    request.resume_at = Some("42b3ba9d-a9f5-4d04-bbfc-5a4880d3be2c");
    let args = plan(&request).args;
    let at = args.iter().position(|a| a == "--resume").unwrap();
    assert_eq!(
        args[at..at + 5],
        strings(&[
            "--resume",
            "0d54be32-b686-4109-b4c6-7b2b846a9fd4",
            "--resume-session-at",
            "42b3ba9d-a9f5-4d04-bbfc-5a4880d3be2c",
            "--fork-session",
        ])
    );
    // Without a session there is nothing to fork.
    request.session = None;
    assert!(!plan(&request).args.iter().any(|a| a == "--fork-session"));
}

#[test]
fn a_session_is_kept_under_the_config_dir_by_its_worktree() {
    let claude = adapter("claude").unwrap();
    let worktree = Path::new("/tmp/ganger-test.x/repo-agent-k");
    let home = BTreeMap::from([("HOME".to_owned(), "/home/me".to_owned())]);
    assert_eq!(
        claude.session_file(&home, worktree, "u-1"),
        Some("/home/me/.claude/projects/-tmp-ganger-test-x-repo-agent-k/u-1.jsonl".into())
    );
    let config = BTreeMap::from([
        ("HOME".to_owned(), "/home/me".to_owned()),
        ("CLAUDE_CONFIG_DIR".to_owned(), "/cfg".to_owned()),
    ]);
    assert_eq!(
        claude.session_file(&config, worktree, "u-1"),
        Some("/cfg/projects/-tmp-ganger-test-x-repo-agent-k/u-1.jsonl".into())
    );
    assert_eq!(claude.session_file(&BTreeMap::new(), worktree, "u-1"), None);
    // A session id is read from the store, which another host may have written: one that is
    // no name makes no path.
    for bad in ["../../../.bashrc", "a/b", ".."] {
        assert_eq!(claude.session_file(&home, worktree, bad), None, "{bad}");
    }
}
