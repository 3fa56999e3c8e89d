//! `ganger race --max N`: at most N attempts work at once, the next starting as one ends; the
//! journal's order shows it. The stand-in `opencode` plays every attempt.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

#[test]
fn max_one_runs_the_attempts_one_after_another() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let run = world.ganger(&[
        "race",
        "m",
        "--message",
        "sleep 1",
        "--attempts",
        "opencode*3",
        "--check",
        "true",
        "--max",
        "1",
        "--json",
    ]);
    run.expect_code(0);
    assert_eq!(run.json()["status"], "won", "{}", run.stdout);
    let journal = world.ganger(&["watch", "--json"]).json();
    let rounds: Vec<(String, String)> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        // A task's first round starts with the task (`task-created`).
        .filter(|e| e["kind"] == "task-created" || e["kind"] == "round-finished")
        .map(|e| {
            (
                e["task"].as_str().unwrap().to_owned(),
                e["kind"].as_str().unwrap().to_owned(),
            )
        })
        .filter(|(task, _)| !task.contains(".j"))
        .collect();
    let expected: Vec<(String, String)> = (1..=3)
        .flat_map(|n| {
            [
                (format!("m.{n}"), "task-created".to_owned()),
                (format!("m.{n}"), "round-finished".to_owned()),
            ]
        })
        .collect();
    assert_eq!(rounds, expected, "{journal:#}");
}
