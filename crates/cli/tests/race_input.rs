//! Bad input to `ganger race`: one clear error line, exit 2, and nothing made (no state, no
//! worktree, no branch, no race): an empty or malformed SPEC, an agent ganger does not know
//! or that is not installed, more attempts than a race runs, `--first-green` with no checks;
//! and a slug a task already uses, which leaves that task alone and makes no race. The
//! stand-in `opencode` does for the one task that must exist.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::pipeline_input::refused;
use ganger_test_support::World;

fn race<'a>(attempts: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["race", "r", "--message", "x", "--attempts", attempts];
    args.extend_from_slice(more);
    args
}

#[test]
fn bad_races_are_refused_before_anything_is_made() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "[agents.gemini]\ncommand = \"/nonexistent/gemini\"\n");
    let check = ["--check", "true"];
    for (attempts, more, needle) in [
        ("", &check[..], "no attempts given"),
        ("opencode,,opencode", &check[..], "entry 2 is empty"),
        (
            "opencode*0,opencode",
            &check[..],
            "a count of 0 runs nothing",
        ),
        (
            "opencode:,opencode",
            &check[..],
            "the model after `:` is empty",
        ),
        ("opencode", &check[..], "at least 2 attempts"),
        ("opencode*17", &check[..], "a race runs at most 16"),
        (
            "opencode*9,opencode*8",
            &check[..],
            "a race runs at most 16",
        ),
        ("opencode,nobody", &check[..], "unknown agent \"nobody\""),
        ("opencode,gemini", &check[..], "/nonexistent/gemini"),
        ("opencode*2", &[][..], "--first-green needs checks"),
        (
            "opencode*2",
            &["--check", "true", "--max", "0"][..],
            "--max 0 would never start",
        ),
        (
            "opencode*2",
            &["--check", "true", "--queue", "--max", "2"][..],
            "--queue takes no --max or --until-green",
        ),
        (
            "opencode*2",
            &["--check", "true", "--queue", "--until-green", "2"][..],
            "--queue takes no --max or --until-green",
        ),
    ] {
        let mut args = race(attempts, more);
        if more.is_empty() {
            args.push("--first-green");
        }
        refused(&world, &args, needle);
    }
    // A judge whose agent is unknown (`[roles.judge]`, else `[roles.code]`).
    let judged = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    judged.use_fake_agent("", "[roles.judge]\nagent = \"nobody\"\n");
    refused(
        &judged,
        &race("opencode*2", &check),
        "the race's judge: unknown agent \"nobody\"",
    );
    assert!(!judged.repo.join(".ganger").exists(), "state was made");
    refused(
        &world,
        &["race", "R", "--message", "x", "--attempts", "opencode*2"],
        "invalid slug",
    );
    refused(
        &world,
        &["race", "r.1", "--message", "x", "--attempts", "opencode*2"],
        "invalid slug",
    );
    assert!(!world.repo.join(".ganger").exists(), "state was made");
    assert_eq!(world.git(&["branch", "--list", "agent/*"]), "");
    assert!(!world.worktree("r.1").exists(), "a worktree was made");
}

#[test]
fn a_slug_a_task_uses_is_refused_and_the_task_is_left_alone() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
        .ganger(&["start", "t", "--message", "first"])
        .expect_code(0);
    let before = world.ganger(&["status", "--json"]).json();
    refused(
        &world,
        &["race", "t", "--message", "x", "--attempts", "opencode*2"],
        "slug t is taken by a task",
    );
    assert_eq!(world.ganger(&["status", "--json"]).json(), before);
    assert!(
        !world.worktree("t.1").exists(),
        "an attempt's worktree was made"
    );
    assert_eq!(world.git(&["branch", "--list", "agent/t.*"]), "");
    // And the other way round: a race's slug is not a task's to start.
    world
        .ganger(&[
            "race",
            "r",
            "--message",
            "x",
            "--attempts",
            "opencode*2",
            "--check",
            "true",
        ])
        .expect_code(0);
    refused(
        &world,
        &["start", "r", "--message", "x"],
        "slug r is a race's",
    );
}

#[test]
fn a_fleet_files_race_whose_judge_cannot_run_is_refused_before_anything_is_made() {
    // Checked when the file is submitted, not first by the race's driver in the background:
    // a judge's agent that is not known, and one that is not installed.
    for (roles, needle) in [
        (
            "[roles.judge]\nagent = \"nobody\"\n",
            "task r: the race's judge: unknown agent \"nobody\"",
        ),
        (
            "[agents.gemini]\ncommand = \"/nonexistent/gemini\"\n[roles.code]\nagent = \"gemini\"\n",
            "/nonexistent/gemini",
        ),
    ] {
        let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
        world.use_fake_agent("", roles);
        let file = world.root().join("crew.toml");
        std::fs::write(
            &file,
            "name = \"crew\"\n[[task]]\nslug = \"r\"\nmessage = \"x\"\n\
             attempts = \"opencode*2\"\nchecks = [\"true\"]\n",
        )
        .unwrap();
        for verb in ["submit", "run"] {
            let run = world.ganger(&["fleet", verb, file.to_str().unwrap()]);
            run.expect_code(2);
            let first = run.stderr.lines().next().unwrap_or_default();
            assert!(
                first.contains(needle),
                "{verb}: {needle:?} not in {first:?}"
            );
            assert!(first.contains("judge"), "{verb}: {first:?}");
        }
        assert!(!world.repo.join(".ganger").exists(), "state was made");
        assert!(!world.worktree("r.1").exists(), "a worktree was made");
        assert_eq!(world.git(&["branch", "--list", "agent/*"]), "");
    }
}
