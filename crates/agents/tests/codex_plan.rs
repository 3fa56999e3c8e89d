//! Codex's command for new, resumed and read-only rounds, `ganger.toml` configuration as `-c`
//! overrides, and the private temporary directory when Codex's home is under the temporary one.
#![cfg(test)]

use ganger_agents::{CommandPlan, Permission, RoundRequest, adapter};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PROMPT: &str = "-starts with a dash, \"quoted\"\nsecond line  ";
const AGENT_DIR: &str = "/work/site/.ganger/agents/codex";

fn request<'a>(env: &'a BTreeMap<String, String>, config: Option<&'a Value>) -> RoundRequest<'a> {
    RoundRequest {
        resume_at: None,
        prompt: PROMPT,
        session: None,
        new_session_id: "00000000-0000-4000-8000-000000000000",
        title: "fix-typo",
        model: Some("gpt-5.5"),
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
    adapter("codex").unwrap().plan(request).unwrap()
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_new_session_reads_the_prompt_from_stdin() {
    let env = env(&[("HOME", "/home/dev")]);
    assert_eq!(
        plan(&request(&env, None)),
        CommandPlan {
            args: strings(&[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-m",
                "gpt-5.5",
                "-c",
                r#"approval_policy="never""#,
                "-c",
                r#"sandbox_mode="workspace-write""#,
                "-c",
                "check_for_update_on_startup=false",
                "-",
            ]),
            env: vec![],
            stdin: Some(PROMPT.as_bytes().to_vec()),
            files: vec![],
            dirs: vec![],
            session: None,
        }
    );
}

#[test]
fn a_resumed_session_names_the_thread_before_the_stdin_dash() {
    let env = env(&[]);
    let mut request = request(&env, None);
    request.session = Some("01a22a2b-67b8-77a2-96ca-86d53b483964");
    request.model = None;
    let args = plan(&request).args;
    assert_eq!(
        &args[..4],
        ["exec", "resume", "--json", "--skip-git-repo-check"]
    );
    assert_eq!(
        &args[args.len() - 2..],
        ["01a22a2b-67b8-77a2-96ca-86d53b483964", "-"]
    );
    assert!(!args.contains(&"-m".to_owned()));
}

#[test]
fn the_sandbox_follows_the_permission_and_ganger_s_own_sandbox() {
    let env = env(&[]);
    let mode = |permission, sandboxed| {
        let mut request = request(&env, None);
        request.permission = permission;
        request.sandboxed = sandboxed;
        plan(&request)
            .args
            .into_iter()
            .find(|arg| arg.starts_with("sandbox_mode="))
            .unwrap()
    };
    assert_eq!(
        mode(Permission::ReadOnly, false),
        r#"sandbox_mode="read-only""#
    );
    assert_eq!(
        mode(Permission::ReadOnly, true),
        r#"sandbox_mode="read-only""#
    );
    assert_eq!(
        mode(Permission::Write, false),
        r#"sandbox_mode="workspace-write""#
    );
    assert_eq!(
        mode(Permission::Write, true),
        r#"sandbox_mode="danger-full-access""#
    );
}

#[test]
fn config_is_flattened_into_overrides_after_ganger_s_own() {
    let env = env(&[]);
    let endpoint = adapter("codex")
        .unwrap()
        .scripted_endpoint("http://127.0.0.1:4000");
    let config = endpoint.config.unwrap();
    let args = plan(&request(&env, Some(&config))).args;
    let overrides: Vec<&str> = args
        .windows(2)
        .filter(|pair| pair[0] == "-c")
        .map(|pair| pair[1].as_str())
        .collect();
    assert_eq!(
        overrides,
        [
            r#"approval_policy="never""#,
            r#"sandbox_mode="workspace-write""#,
            "check_for_update_on_startup=false",
            r#"model_provider="scripted""#,
            r#"model_providers.scripted.base_url="http://127.0.0.1:4000/v1""#,
            r#"model_providers.scripted.env_key="SCRIPTED_MODEL_KEY""#,
            r#"model_providers.scripted.name="Scripted""#,
            "model_providers.scripted.request_max_retries=1",
            "model_providers.scripted.stream_max_retries=1",
            r#"model_providers.scripted.wire_api="responses""#,
        ]
    );
    assert_eq!(endpoint.model, "gpt-5.5");
    let bad = json!({"model": null});
    let err = adapter("codex")
        .unwrap()
        .plan(&request(&env, Some(&bad)))
        .unwrap_err();
    assert!(err.to_string().contains("[agents.codex.config]"), "{err}");
}

#[test]
fn a_home_under_the_temporary_directory_gets_codex_a_private_one() {
    let private = PathBuf::from(AGENT_DIR).join("tmp");
    let trap = |pairs: &[(&str, &str)]| {
        let env = env(pairs);
        let plan = plan(&request(&env, None));
        let tmpdir = plan
            .env
            .iter()
            .find(|(k, _)| k == "TMPDIR")
            .map(|(_, v)| v.clone());
        match tmpdir {
            Some(value) => {
                assert_eq!(value, private.to_string_lossy());
                assert_eq!(plan.dirs, std::slice::from_ref(&private));
                true
            }
            None => {
                assert!(plan.dirs.is_empty());
                false
            }
        }
    };
    // CODEX_HOME under the default /tmp.
    assert!(trap(&[("CODEX_HOME", "/tmp/codex-home")]));
    // HOME under a custom TMPDIR, no CODEX_HOME: the home is $HOME/.codex.
    assert!(trap(&[
        ("HOME", "/scratch/tmp/home"),
        ("TMPDIR", "/scratch/tmp")
    ]));
    assert!(trap(&[
        ("CODEX_HOME", "/scratch/tmp/"),
        ("TMPDIR", "/scratch/tmp/")
    ]));
    // No trap: the home is elsewhere, or only shares a name prefix with the temporary dir.
    assert!(!trap(&[("HOME", "/home/dev")]));
    assert!(!trap(&[("CODEX_HOME", "/tmpfoo/codex")]));
    assert!(!trap(&[
        ("CODEX_HOME", "/tmp/codex"),
        ("TMPDIR", "/var/tmp")
    ]));
    assert!(!trap(&[]));
}
