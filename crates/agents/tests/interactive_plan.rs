//! `ganger attach`'s command for each agent: the resumed round's command without what makes
//! it headless (print mode, stream format, the prompt), with its session, model, settings and
//! permissions kept, and stdin left to the person.
#![cfg(test)]

use ganger_agents::{Permission, RoundRequest, adapter};
use std::collections::BTreeMap;
use std::path::Path;

fn interactive(name: &str) -> (Vec<String>, Vec<(String, String)>, bool) {
    let env = BTreeMap::new();
    let request = RoundRequest {
        resume_at: None,
        prompt: "",
        session: Some("S-1"),
        new_session_id: "00000000-0000-4000-8000-000000000000",
        title: "t",
        model: Some("p/m"),
        worktree: Path::new("/w/t"),
        config: None,
        inherited_config: None,
        permission: Permission::Write,
        sandboxed: false,
        env: &env,
        agent_dir: Path::new("/w/.ganger/agents/x"),
    };
    let agent = adapter(name).unwrap();
    let plan = agent.interactive(agent.plan(&request).unwrap()).unwrap();
    (plan.args, plan.env, plan.stdin.is_some())
}

#[test]
fn every_agent_opens_its_own_interface_on_the_session() {
    let expected: [(&str, &[&str]); 5] = [
        ("opencode", &["--session", "S-1", "--model", "p/m"]),
        (
            "claude",
            &[
                "--resume",
                "S-1",
                "--model",
                "p/m",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash",
            ],
        ),
        ("codex", &["resume"]),
        (
            "gemini",
            &[
                "--skip-trust",
                "-m",
                "p/m",
                "--resume",
                "S-1",
                "--approval-mode",
                "yolo",
            ],
        ),
        (
            "qwen",
            &["--resume", "S-1", "-m", "p/m", "--approval-mode", "yolo"],
        ),
    ];
    for (name, args) in expected {
        let (got, _, stdin) = interactive(name);
        assert!(!stdin, "{name}: stdin stays the person's");
        if name == "codex" {
            // Codex: `resume`, its -c settings and the model, then the session last.
            assert_eq!(got.first().map(String::as_str), Some("resume"), "{got:?}");
            assert_eq!(got.last().map(String::as_str), Some("S-1"), "{got:?}");
            assert!(got.windows(2).any(|w| w == ["-m", "p/m"]), "{got:?}");
            for headless in ["exec", "--json", "--skip-git-repo-check", "-"] {
                assert!(!got.iter().any(|a| a == headless), "{got:?}");
            }
            continue;
        }
        assert_eq!(got, args, "{name}");
    }
}

#[test]
fn the_command_agent_has_no_interface_of_its_own() {
    let env = BTreeMap::new();
    let config = serde_json::json!({ "argv": ["tool", "{prompt}"] });
    let request = RoundRequest {
        resume_at: None,
        prompt: "",
        session: Some("S-1"),
        new_session_id: "n",
        title: "t",
        model: None,
        worktree: Path::new("/w/t"),
        config: Some(&config),
        inherited_config: None,
        permission: Permission::Write,
        sandboxed: false,
        env: &env,
        agent_dir: Path::new("/w/a"),
    };
    let agent = ganger_agents::command::CommandAgent { format: "text" };
    use ganger_agents::Adapter;
    assert!(agent.interactive(agent.plan(&request).unwrap()).is_none());
}
