//! What each agent can do, as the engine asks its adapter: the program and configuration its
//! table of `ganger.toml` gives, a reasoning effort, how a session goes back for a rewind; and
//! that the `command` agent borrows a format's stream reader but none of its capabilities (its
//! CLI is not that agent's).
#![cfg(test)]

use ganger_agents::{
    AgentConfig, NamedProgram, SessionFork, adapter, adapters, command, configured,
};

fn table(text: &str) -> AgentConfig {
    toml::from_str(text).unwrap()
}

#[test]
fn every_adapter_hands_out_its_folder_s_facts() {
    let facts = [
        &ganger_agents::opencode::FACTS,
        &ganger_agents::claude::FACTS,
        &ganger_agents::codex::FACTS,
        &ganger_agents::gemini::FACTS,
        &ganger_agents::qwen::FACTS,
    ];
    assert_eq!(adapters().len(), facts.len());
    for (adapter, facts) in adapters().iter().zip(facts) {
        assert_eq!(adapter.facts(), facts);
        assert_eq!(adapter.name(), facts.name);
        let package = facts.package.unwrap();
        assert_eq!(
            (adapter.npm_package(), adapter.tested_version()),
            (package.npm, package.tested_version)
        );
    }
    let text = configured(command::NAME, &AgentConfig::default()).unwrap();
    assert_eq!(text.facts(), &command::FACTS);
    assert_eq!(text.package(), None);
    assert_eq!((text.npm_package(), text.tested_version()), ("", ""));
}

#[test]
fn the_table_s_config_is_what_an_agent_plans_with_and_the_command_agent_reads_its_templates() {
    let settings = table(
        "argv = [\"tool\", \"{prompt}\"]\nprompt = \"argv\"\nformat = \"claude\"\n\
         [config]\nshare = \"disabled\"\n",
    );
    for adapter in adapters() {
        assert_eq!(
            adapter.configuration(&settings),
            Some(serde_json::json!({ "share": "disabled" })),
            "{}",
            adapter.name()
        );
        assert_eq!(adapter.named_program(&settings).unwrap(), None);
    }
    let configured = configured(command::NAME, &settings).unwrap();
    assert_eq!(
        configured.configuration(&settings),
        Some(serde_json::json!({
            "argv": ["tool", "{prompt}"],
            "resume_argv": null,
            "prompt": "argv",
            "format": "claude",
        }))
    );
    assert_eq!(
        configured.named_program(&settings).unwrap(),
        Some(NamedProgram {
            program: "tool".into(),
            named_in: "agents.command.argv in ganger.toml",
        })
    );
    assert_eq!(
        configured
            .named_program(&AgentConfig::default())
            .unwrap_err()
            .to_string(),
        "the command agent has no program: set [agents.command] argv in ganger.toml"
    );
}

#[test]
fn an_effort_goes_where_the_cli_reads_it() {
    let effort = |name: &str| adapter(name).unwrap().effort("high");
    assert_eq!(
        effort("codex"),
        Some(toml::from_str("model_reasoning_effort = \"high\"").unwrap())
    );
    assert_eq!(
        effort("opencode"),
        Some(toml::from_str("[agent.build]\nreasoningEffort = \"high\"").unwrap())
    );
    for name in ["claude", "gemini", "qwen"] {
        assert_eq!(effort(name), None, "{name}");
    }
}

#[test]
fn a_rewind_forks_claude_at_a_point_copies_opencode_and_starts_the_others_anew() {
    let stream = r#"{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"uuid":"u1"}"#;
    match adapter("claude").unwrap().session_fork() {
        Some(SessionFork::AtNextRound { point }) => {
            assert_eq!(point(stream, "s1").as_deref(), Some("u1"));
        }
        other => panic!("claude forks at the next round, not {other:?}"),
    }
    match adapter("opencode").unwrap().session_fork() {
        Some(SessionFork::Copy(copy)) => {
            assert_eq!((copy.export_args)("ses_1"), ["export", "ses_1"]);
            assert_eq!((copy.import_args)("/f.json"), ["import", "/f.json"]);
        }
        other => panic!("opencode's session is copied, not {other:?}"),
    }
    for name in ["codex", "gemini", "qwen"] {
        assert!(adapter(name).unwrap().session_fork().is_none(), "{name}");
    }
    // A configured command that prints Claude's stream is not Claude: its templates take no
    // fork point, so its rewind starts a new session.
    for format in command::FORMATS {
        let settings = AgentConfig {
            format: Some(format.into()),
            ..AgentConfig::default()
        };
        let configured = configured(command::NAME, &settings).unwrap();
        assert!(configured.session_fork().is_none(), "{format}");
        assert_eq!(configured.effort("high"), None, "{format}");
    }
}

#[test]
fn warm_by_default_are_the_agents_whose_warm_column_passes_every_conformance_scenario() {
    let warm: Vec<&str> = adapters()
        .iter()
        .filter(|a| a.warm_by_default())
        .map(|a| a.name())
        .collect();
    assert_eq!(warm, ["opencode", "claude", "codex", "gemini", "qwen"]);
    assert!(
        adapters()
            .iter()
            .all(|a| !a.warm_by_default() || a.warm_plan().is_some())
    );
}
