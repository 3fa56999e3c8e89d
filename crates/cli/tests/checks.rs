//! Checks and the fix loop, fast: the stand-in `opencode` (test-support's `fake-opencode.sh`)
//! plays the agent and appends each prompt's first line to `fake.txt`, so that a check can
//! count the rounds. The real agents' fix loop is in the conformance suite.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, living_pids_with_env, wait_until};
use serde_json::Value;
use std::time::Duration;

fn world(extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", extra);
    world
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {report:#}"))
}

/// Passes once `fake.txt` has `lines` lines, i.e. after that many rounds.
fn rounds_check(lines: u32) -> String {
    format!(
        "[[checks]]\nname = \"rounds\"\ncommand = \"n=$(wc -l < fake.txt); echo found $n lines; test $n -ge {lines}\"\n"
    )
}

#[test]
fn a_round_whose_check_fails_is_failed_whatever_the_agent_said_and_the_report_shows_why() {
    let world = world(
        "[[checks]]\nname = \"present\"\ncommand = \"test -f fake.txt\"\n\
         [[checks]]\nname = \"tests\"\ncommand = \"echo starting; echo 'assertion failed: 1 == 2' >&2; exit 3\"\n",
    );
    let run = world.ganger(&["start", "red", "--message", "hello", "--json"]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    assert_eq!(
        report["reason"],
        "the agent said it was done, but checks failed: tests (exit 3)"
    );
    let present = check(&report, "present");
    assert_eq!(present["state"], "passed");
    assert!(present["tail"].is_null());
    let tests = check(&report, "tests");
    assert_eq!(tests["state"], "failed");
    assert_eq!(tests["exit_code"], 3);
    assert_eq!(tests["tail"], "starting\nassertion failed: 1 == 2");
    let log = std::path::PathBuf::from(tests["log"].as_str().unwrap());
    assert_eq!(
        log,
        world.repo.join(".ganger/tasks/red/round-1.check-tests.log")
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("assertion failed")
    );

    // Status says the same, in words.
    let status = world.ganger(&["status", "red"]);
    status.expect_code(0);
    for expected in [
        "status: failed",
        "checks: present passed in ",
        "tests failed (exit 3) in ",
        "check tests (`echo starting;",
        "  assertion failed: 1 == 2",
    ] {
        assert!(
            status.stdout.contains(expected),
            "{expected:?} in:\n{}",
            status.stdout
        );
    }
}

#[test]
fn a_round_whose_checks_pass_is_done_and_one_off_checks_run_after_the_configured_ones() {
    let world = world("[[checks]]\nname = \"present\"\ncommand = \"test -f fake.txt\"\n");
    let run = world.ganger(&[
        "start",
        "green",
        "--message",
        "hello",
        "--check",
        "grep -q hello fake.txt",
        "--json",
    ]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["status"], "done");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["present", "check"]);
    assert!(
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["state"] == "passed")
    );
    // The one-off check was for that round; the next one runs the configured one only.
    let next = world.ganger(&["fix", "green", "--message", "again", "--json"]);
    next.expect_code(0);
    assert_eq!(next.json()["checks"].as_array().unwrap().len(), 1);
}

#[test]
fn until_green_sends_the_failures_back_until_the_checks_pass() {
    let world = world(&rounds_check(3));
    let run = world.ganger(&[
        "start",
        "loop",
        "--message",
        "hello",
        "--until-green",
        "3",
        "--json",
    ]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["round"], 3, "{report:#}");
    assert_eq!(report["status"], "done");
    assert_eq!(report["kind"], "fix");
    assert_eq!(
        report["session"].as_str().map(|s| s.starts_with("ses_")),
        Some(true)
    );
    // The fix rounds' prompts carry the failing check's command and output.
    let prompt =
        std::fs::read_to_string(world.repo.join(".ganger/tasks/loop/round-2.prompt.md")).unwrap();
    assert!(
        prompt.contains("## Check `rounds`: `n=$(wc -l < fake.txt);"),
        "{prompt}"
    );
    assert!(prompt.contains("exited with code 1"), "{prompt}");
    assert!(prompt.contains("found 1 lines"), "{prompt}");
    let prompt =
        std::fs::read_to_string(world.repo.join(".ganger/tasks/loop/round-3.prompt.md")).unwrap();
    assert!(prompt.contains("found 2 lines"), "{prompt}");
    assert!(
        !world
            .repo
            .join(".ganger/tasks/loop/round-4.prompt.md")
            .exists()
    );
}

#[test]
fn until_green_gives_up_after_its_rounds_and_says_so() {
    let world = world(&rounds_check(10));
    let run = world.ganger(&[
        "start",
        "stubborn",
        "--message",
        "hello",
        "--until-green",
        "2",
    ]);
    run.expect_code(1);
    assert!(
        run.stdout.contains("checks failed after round 1 of stubborn (rounds); sending them back, fix round 1 of at most 2"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "gave up on stubborn: checks still fail after 2 fix rounds (--until-green 2): rounds"
        ),
        "{}",
        run.stdout
    );
    let status = world.ganger(&["status", "stubborn", "--json"]);
    let report = status.json();
    assert_eq!(report["round"], 3);
    assert_eq!(report["status"], "failed");
}

#[test]
fn until_green_runs_in_the_detached_host_and_wait_waits_for_the_whole_loop() {
    let world = world(&rounds_check(3));
    let run = world.ganger(&[
        "start",
        "bg",
        "--message",
        "hello",
        "--until-green",
        "3",
        "--detach",
    ]);
    run.expect_code(0);
    let waited = world.ganger(&["wait", "bg", "--timeout", "60s", "--json"]);
    waited.expect_code(0);
    let report = waited.json();
    assert_eq!(report["round"], 3, "{report:#}");
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(check(&report, "rounds")["state"], "passed");
    assert!(!world.repo.join(".ganger/run/loop-bg.lock").exists());
}

#[test]
fn a_check_past_its_time_limit_is_stopped_and_fails() {
    let world = world("[[checks]]\nname = \"slow\"\ncommand = \"sleep 60\"\ntimeout = 1\n");
    let run = world.ganger(&["start", "slow", "--message", "hello", "--json"]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(check(&report, "slow")["state"], "timed-out");
    assert_eq!(
        report["reason"],
        "the agent said it was done, but checks failed: slow (timed out)"
    );
    let marker = format!("GANGER_ROUND={}", report["token"].as_str().unwrap());
    assert!(living_pids_with_env(&marker).is_empty());
}

#[test]
fn cancelling_a_round_while_its_check_runs_stops_the_check() {
    let world = world("[[checks]]\nname = \"forever\"\ncommand = \"sleep 300\"\n");
    let run = world.ganger(&["start", "cx", "--message", "hello", "--detach", "--json"]);
    run.expect_code(0);
    let token = run.json();
    let slug = token["task"].as_str().unwrap();
    let running = wait_until(Duration::from_secs(30), || {
        std::fs::metadata(
            world
                .repo
                .join(".ganger/tasks/cx/round-1.check-forever.log"),
        )
        .is_ok()
    });
    assert!(running, "the check never started");
    world.ganger(&["cancel", slug]).expect_code(0);
    let ended = wait_until(Duration::from_secs(30), || {
        world.ganger(&["status", "cx", "--json"]).json()["status"] == "cancelled"
    });
    assert!(ended, "the round did not end cancelled");
    let report = world.ganger(&["status", "cx", "--json"]).json();
    let marker = format!("GANGER_ROUND={}", report["token"].as_str().unwrap());
    assert!(
        living_pids_with_env(&marker).is_empty(),
        "the check survived"
    );
    assert_eq!(check(&report, "forever")["state"], "failed");
}

#[test]
fn bad_checks_are_refused_before_anything_is_made() {
    let world = world("");
    let run = world.ganger(&["start", "nothing", "--message", "x", "--until-green", "0"]);
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("--until-green 0: give a number of fix rounds from 1 to 50"),
        "{}",
        run.stderr
    );
    let run = world.ganger(&["start", "nothing", "--message", "x", "--check", " "]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("--check needs a command"),
        "{}",
        run.stderr
    );
    assert!(!world.worktree("nothing").exists());
    world.write(
        "ganger.toml",
        "[[checks]]\nname = \"a b\"\ncommand = \"true\"\n",
    );
    let run = world.ganger(&["start", "nothing", "--message", "x"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("not a valid check name"),
        "{}",
        run.stderr
    );
    assert!(!world.worktree("nothing").exists());
}

#[test]
fn a_read_only_round_runs_no_check_and_refuses_a_one_off_one() {
    let world = world("[[checks]]\nname = \"never\"\ncommand = \"exit 1\"\n");
    let run = world.ganger(&[
        "start",
        "reader",
        "--message",
        "hello",
        "--permission",
        "read-only",
        "--json",
    ]);
    let report = run.json();
    assert_eq!(report["checks"], serde_json::json!([]), "{report:#}");
    let run = world.ganger(&["fix", "reader", "--message", "x", "--check", "true"]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("--check needs a task that may write"),
        "{}",
        run.stderr
    );
}
