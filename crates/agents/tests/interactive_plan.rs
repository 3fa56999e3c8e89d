//! `ganger attach`'s command for each agent: the resumed round's command without what makes
//! it headless (print mode, stream format, the prompt), with its session, model, settings and
//! permissions kept, and stdin left to the person.
#![cfg(test)]

use ganger_agents::{AgentConfig, NamedProgram, Permission, RoundRequest, adapter};
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
    let interactive = agent
        .interactive(&request, &AgentConfig::default())
        .unwrap()
        .unwrap();
    assert_eq!(interactive.program, None, "{name} opens its own program");
    let plan = interactive.plan;
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
fn the_command_agent_opens_the_program_its_settings_name() {
    let env = BTreeMap::new();
    let request = RoundRequest {
        resume_at: None,
        prompt: "",
        session: Some("S-1"),
        new_session_id: "n",
        title: "t",
        model: None,
        worktree: Path::new("/w/t"),
        config: None,
        inherited_config: None,
        permission: Permission::Write,
        sandboxed: false,
        env: &env,
        agent_dir: Path::new("/w/a"),
    };
    let agent = ganger_agents::command::CommandAgent { format: "text" };
    use ganger_agents::Adapter;
    let unset = agent.interactive(&request, &AgentConfig::default());
    assert_eq!(
        unset.unwrap_err().to_string(),
        "the command agent has no interactive interface: set [agents.command] interactive_argv in ganger.toml"
    );
    let settings = AgentConfig {
        interactive_argv: Some(
            ["tool", "--resume", "{session}", "--model", "{model}"]
                .map(String::from)
                .to_vec(),
        ),
        ..AgentConfig::default()
    };
    let interactive = agent.interactive(&request, &settings).unwrap().unwrap();
    assert_eq!(
        interactive.program,
        Some(NamedProgram {
            program: "tool".into(),
            named_in: "agents.command.interactive_argv",
        })
    );
    // No model given: `--model {model}` goes whole.
    assert_eq!(interactive.plan.args, ["--resume", "S-1"]);
    assert_eq!(interactive.plan.stdin, None);
    let empty = AgentConfig {
        interactive_argv: Some(Vec::new()),
        ..AgentConfig::default()
    };
    assert_eq!(
        agent.interactive(&request, &empty).unwrap_err().to_string(),
        "agents.command.interactive_argv is empty"
    );
}
