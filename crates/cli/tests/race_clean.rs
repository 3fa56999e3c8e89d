//! `ganger clean SLUG` of a race: refused while it runs; once it has ended, the losers' and
//! the judges' worktrees and branches go, their work kept under `refs/ganger/`, and the
//! winner's stays for `merge`. The stand-in `opencode` plays the attempts and the judges.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use std::time::{Duration, Instant};

#[test]
fn cleaning_a_race_removes_its_losers_and_keeps_their_work_and_the_winner() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let race = [
        "race",
        "c",
        "--message",
        "sleep 2",
        "--attempts",
        "opencode*2",
        "--check",
        "true",
    ];
    let mut detached = race.to_vec();
    detached.push("--detach");
    world.ganger(&detached).expect_code(0);
    let refused = world.ganger(&["clean", "c"]);
    refused.expect_code(2);
    assert!(
        refused.stderr.contains("race c is still running"),
        "{}",
        refused.stderr
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    let report = loop {
        let report = world.ganger(&["status", "c", "--json"]).json();
        if report["status"] != "running" {
            break report;
        }
        assert!(Instant::now() < deadline, "the race never ended");
        std::thread::sleep(Duration::from_millis(200));
    };
    let winner = report["winner_task"].as_str().unwrap().to_owned();
    let loser = if winner == "c.1" { "c.2" } else { "c.1" };
    let judges = ["c.j1v2", "c.j2v1"];
    for task in judges.iter().chain([&loser]) {
        assert!(world.worktree(task).exists(), "{task}");
    }
    world.ganger(&["clean", "c"]).expect_code(0);
    for task in judges.iter().chain([&loser]) {
        assert!(!world.worktree(task).exists(), "{task} kept its worktree");
        assert_eq!(
            world.git(&["branch", "--list", &format!("agent/{task}")]),
            ""
        );
    }
    // The loser's work is kept; the winner is untouched and merges.
    assert!(
        !world
            .git(&["for-each-ref", &format!("refs/ganger/{loser}/")])
            .is_empty()
    );
    assert!(world.worktree(&winner).exists());
    world.ganger(&["merge", "c"]).expect_code(0);
    assert!(world.repo.join("fake.txt").exists());
}
