//! `ganger agents` reads every agent's version in parallel; each run must be left alone by the
//! others' clean-up (they once shared one marker, and one run's clean-up killed the others).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use std::os::unix::fs::PermissionsExt;

#[test]
fn every_agents_version_is_read_even_when_the_version_commands_overlap() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let mut toml = String::new();
    // Each prints its tested version the way the real CLI words it.
    let tested = |name: &str| ganger_agents::adapter(name).unwrap().tested_version();
    for (name, version, delay) in [
        ("opencode", tested("opencode").to_owned(), "1.6"),
        (
            "claude",
            format!("{} (Claude Code)", tested("claude")),
            "0.1",
        ),
        ("codex", format!("codex-cli {}", tested("codex")), "0.6"),
        ("gemini", tested("gemini").to_owned(), "2.1"),
        ("qwen", tested("qwen").to_owned(), "1.1"),
    ] {
        let program = world.root().join(format!("slow-{name}"));
        // All five run at once and end at different times, each leaving a child behind as
        // CLIs do; the first to end is cleaned up while the others still run.
        std::fs::write(
            &program,
            format!("#!/bin/sh\nsleep 5 &\nsleep {delay}\necho '{version}'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        toml.push_str(&format!(
            "[agents.{name}]\ncommand = {:?}\n\n",
            program.to_string_lossy()
        ));
    }
    world.write("ganger.toml", &toml);
    let listed = world.ganger(&["agents", "--json"]);
    listed.expect_code(0);
    for agent in listed.json()["agents"].as_array().unwrap() {
        assert_eq!(agent["source"], "configured", "{agent:#}");
        assert_eq!(agent["tested"], true, "{agent:#}");
    }
}
