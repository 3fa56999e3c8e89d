//! End-to-end with the real, pinned Gemini CLI kept warm (`gemini --acp`), which ganger never
//! asks to load a session: once its warm agent is gone, the task's next round runs cold at
//! once, continuing the session, and starts no warm agent that could not serve it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, Script};
use ganger_test_support::{World, agent_toml};

#[test]
fn a_round_that_continues_a_session_without_its_warm_agent_runs_cold_and_starts_none() {
    let llm = FakeLlm::start(
        Script::new()
            .text("Done one. {{history}}")
            .text("Done two. {{history}}"),
    )
    .unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let limits = "timeout = \"150s\"\nstall = \"60s\"";
    world.write(
        "ganger.toml",
        &agent_toml(
            "gemini",
            &llm.root_url(),
            limits,
            "[warm]\ndefault = true\n",
        ),
    );
    let first = world
        .ganger(&["start", "g1", "--message", "say one", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    let stream = |round: u32| {
        std::fs::read_to_string(
            world
                .root()
                .join(format!("repo/.ganger/tasks/g1/round-{round}.jsonl")),
        )
        .unwrap()
    };
    assert!(stream(1).contains(r#""ganger":"turn""#), "round 1 ran warm");
    world.ganger(&["warm", "stop", "g1"]).expect_code(0);

    let second = world
        .ganger(&["fix", "g1", "--message", "say two", "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], first["session"]);
    assert!(
        !stream(2).contains(r#""ganger":"turn""#),
        "round 2 ran cold"
    );
    let listed = world.ganger(&["warm", "list", "--json"]).json();
    assert_eq!(
        listed["agents"].as_array().map(Vec::len),
        Some(0),
        "a warm agent was started that could not serve the round: {listed:#}"
    );
}
