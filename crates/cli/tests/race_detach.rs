//! `ganger race --detach`: the race is admitted and recorded in the foreground (bad input is
//! still exit 2 with nothing made), then driven by a detached `ganger race-host`; `status`
//! follows it to its end. A driver killed with SIGKILL mid-race is resumed by the same
//! command again, in the foreground, and no attempt runs twice. The stand-in `opencode` plays
//! every attempt (its `sleep N` prompt keeps an attempt busy N seconds).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use serde_json::Value;
use std::time::{Duration, Instant};

const RACE: &[&str] = &[
    "race",
    "d",
    "--message",
    "sleep 3",
    "--attempts",
    "opencode*2",
    "--check",
    "true",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = RACE.to_vec();
    args.extend_from_slice(extra);
    args
}

/// The race's report once it has ended.
fn ended(world: &World) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let report = world.ganger(&["status", "d", "--json"]).json();
        if report["status"] != "running" {
            return report;
        }
        assert!(
            Instant::now() < deadline,
            "the race never ended: {report:#}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn rounds_of_each_attempt(world: &World) -> Vec<u64> {
    (1..=2)
        .map(|n| {
            world
                .ganger(&["status", &format!("d.{n}"), "--json"])
                .json()["round"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

#[test]
fn a_detached_race_runs_to_its_end_in_the_background() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
        .ganger(&[
            "race",
            "d",
            "--message",
            "x",
            "--attempts",
            "opencode*0",
            "--detach",
        ])
        .expect_code(2);
    assert!(!world.repo.join(".ganger").exists(), "bad input made state");
    let run = world.ganger(&with(&["--detach", "--json"]));
    run.expect_code(0);
    assert_eq!(run.json()["status"], "running", "{}", run.stdout);
    let report = ended(&world);
    assert_eq!(report["status"], "won", "{report:#}");
    assert_eq!(rounds_of_each_attempt(&world), [1, 1]);
    let log = world.repo.join(".ganger/races/d.host.log");
    assert!(std::fs::read_to_string(log).unwrap().contains("winner: d."));
}

#[test]
fn a_detached_driver_killed_mid_race_is_resumed_by_the_same_command() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let run = world.ganger(&with(&["--detach"]));
    run.expect_code(0);
    let pid: i32 = run
        .stdout
        .split("(pid ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {}", run.stdout));
    // Both attempts started (they run in hosts of their own), then the driver is killed.
    let deadline = Instant::now() + Duration::from_secs(60);
    while world.ganger(&["status", "--json"]).json()["tasks"]
        .as_array()
        .map_or(0, Vec::len)
        < 2
    {
        assert!(Instant::now() < deadline, "the attempts never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(
        world.ganger(&["status", "d", "--json"]).json()["status"],
        "running"
    );
    let resumed = world.ganger(RACE);
    resumed.expect_code(0);
    assert_eq!(ended(&world)["status"], "won");
    assert_eq!(rounds_of_each_attempt(&world), [1, 1]);
}
