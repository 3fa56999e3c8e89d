//! `ganger race --max N`: at most N attempts work at once, the next starting as one ends; the
//! journal's order shows it. The stand-in `opencode` plays every attempt.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use serde_json::Value;

/// A world of the stand-in agent, and the report of the race `slug` of three attempts whose
/// brief is `sleep 1`, run to its end with `extra` options.
fn raced(slug: &str, extra: &[&str]) -> (World, Value) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let mut args = vec![
        "race",
        slug,
        "--message",
        "sleep 1",
        "--attempts",
        "opencode*3",
        "--check",
        "true",
        "--json",
    ];
    args.extend_from_slice(extra);
    let run = world.ganger(&args);
    run.expect_code(0);
    let report = run.json();
    (world, report)
}

#[test]
fn max_one_runs_the_attempts_one_after_another() {
    let (world, report) = raced("m", &["--max", "1"]);
    assert_eq!(report["status"], "won", "{report:#}");
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

/// The race's budget is the whole race's: the stand-in spends $0.002 a round, so with $0.003
/// attempt 1 passes, attempt 2 is stopped (cancelled) when the race reaches the budget, and attempt 3 is
/// never started; the one that passed wins, and each row says why the others are out.
#[test]
fn the_budget_is_the_whole_races_and_stops_the_attempts_that_would_pass_it() {
    let (world, report) = raced("b", &["--max", "1", "--budget-usd", "0.003"]);
    assert_eq!(report["winner_task"], "b.1", "{report:#}");
    assert_eq!(report["rule"], "only-survivor");
    let rows = report["attempts"].as_array().unwrap();
    assert_eq!(rows[1]["status"], "cancelled", "{report:#}");
    let why = rows[1]["reason"].as_str().unwrap();
    assert!(
        why.contains("budget of $0.0030 for fleet race:b reached"),
        "{why}"
    );
    assert_eq!(rows[2]["status"], "not-started");
    assert_eq!(rows[2]["reason"], "not started");
    assert!(
        world.ganger(&["status", "b.3", "--json"]).code != 0,
        "b.3 exists"
    );
}

/// `--first-green` stops the others for good, an attempt in a fix loop (`--until-green`)
/// included, whether it is in a round or between two: after the race, no other attempt has a
/// round running, its last round is cancelled, and it starts no round more.
#[test]
fn first_green_stops_an_attempt_in_its_fix_loop_for_good() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    // Attempt 2's checks always fail (a fix round every half second or so); attempt 1's pass
    // after a second.
    let check = r#"case "$PWD" in *f.2) sleep 0.3; exit 1;; *) sleep 1;; esac"#;
    let run = world.ganger(&[
        "race",
        "f",
        "--message",
        "x",
        "--attempts",
        "opencode*2",
        "--check",
        check,
        "--until-green",
        "10",
        "--first-green",
        "--json",
    ]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["winner_task"], "f.1", "{report:#}");
    let rounds = |world: &World| world.ganger(&["status", "f.2", "--json"]).json();
    let after = rounds(&world);
    assert_eq!(after["status"], "cancelled", "{after:#}");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(rounds(&world)["round"], after["round"], "f.2 went on");
}
