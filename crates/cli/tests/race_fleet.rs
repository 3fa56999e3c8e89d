//! A race as a fleet file's task (`attempts = "SPEC"`): its attempts queued by the submission
//! under the file's fleet, run by `fleet run` under the file's limits, the race driven to its
//! winner in the background; the file submitted again finds the race ended. Bad SPEC and a
//! race's refused keys: exit 2, nothing queued. Witnesses outside ganger: the workers' start
//! and end times, and the queue's and races' rows read from the database itself.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::fleet_world;

use fleet_world::FleetWorld;
use ganger_fake_llm::Script;
use serde_json::Value;
use std::time::{Duration, Instant};

/// (slug, fleet) of every queue row, by id.
fn queue_fleets(fw: &FleetWorld) -> Vec<(String, Option<String>)> {
    let db = rusqlite::Connection::open(fw.world.repo.join(".ganger/state.db")).unwrap();
    let mut statement = db
        .prepare("SELECT slug, fleet FROM queue ORDER BY id")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The race's report once it has ended (its driver runs in the background).
fn ended_report(fw: &FleetWorld, slug: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let run = fw.world.ganger(&["status", slug, "--json"]);
        let report = run.json();
        if report["status"] != "running" || Instant::now() > deadline {
            return report;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

const FLEET: &str = "name = \"crew\"\n[limits]\nglobal = 1\n\
    [[task]]\nslug = \"r\"\nmessage = \"work\"\nattempts = \"command*2,opencode\"\nchecks = [\"true\"]\n\
    [[task]]\nslug = \"plain\"\nmessage = \"work\"\n";

#[test]
fn a_fleet_files_race_runs_its_attempts_under_the_fleet_and_picks_a_winner() {
    let fw = FleetWorld::new(Script::new(), 300);
    let file = fw.fleet_file("crew", FLEET);
    let run = fw
        .world
        .ganger(&["fleet", "run", file.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let report = ended_report(&fw, "r");
    assert_eq!(report["status"], "won", "{report:#}");
    assert_eq!(
        report["attempts"].as_array().unwrap().len(),
        3,
        "{report:#}"
    );
    for attempt in report["attempts"].as_array().unwrap() {
        assert_eq!(attempt["status"], "done", "{report:#}");
    }
    let agents: Vec<&str> = report["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, ["command", "command", "opencode"], "{report:#}");
    // Each attempt a start item of the file's fleet (not the race's own), delivered once.
    let rows = queue_fleets(&fw);
    let attempts: Vec<_> = rows.iter().filter(|r| r.0.starts_with("r.")).collect();
    assert_eq!(attempts.len(), 3, "{rows:?}");
    assert!(
        attempts.iter().all(|r| r.1.as_deref() == Some("crew")),
        "{rows:?}"
    );
    // The file's `global = 1` held the attempts and the plain task: no two runs overlapped.
    let mut runs: Vec<(u128, u128)> = ["r.1", "r.2", "r.3", "plain"]
        .iter()
        .flat_map(|slug| {
            let runs = fw.runs(slug);
            assert_eq!(runs.len(), 1, "{slug} ran {} times", runs.len());
            runs
        })
        .collect();
    runs.sort();
    assert!(
        runs.windows(2).all(|w| w[1].0 >= w[0].1),
        "rounds overlapped: {runs:?}"
    );
    // Submitted again: the race has ended, so nothing of it is queued again.
    let again = fw
        .world
        .ganger(&["fleet", "submit", file.to_str().unwrap(), "--json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let submitted = &again.json()["submitted"];
    assert!(
        submitted["finished"]
            .as_array()
            .unwrap()
            .contains(&Value::from("r")),
        "{submitted:#}"
    );
    assert_eq!(submitted["started"], serde_json::json!([]), "{submitted:#}");
    assert_eq!(queue_fleets(&fw).len(), rows.len());
}

#[test]
fn a_bad_race_in_a_fleet_file_is_exit_2_with_nothing_queued() {
    let fw = FleetWorld::new(Script::new(), 0);
    let cases = [
        (
            "attempts = \"command*0\"",
            "task r: --attempts \"command*0\": entry 1",
        ),
        ("attempts = \"command\"", "at least 2 attempts"),
        ("attempts = \"Nope,command\"", "is not an agent's name"),
        ("attempts = \"nosuch*2\"", "nosuch"),
        (
            "attempts = \"command*2\"\nagent = \"command\"",
            "takes no agent",
        ),
        (
            "attempts = \"command*2\"\nfirst_green = true",
            "first_green needs checks",
        ),
        ("first_green = true", "give attempts"),
        (
            "attempts = \"command*2\"\n[[task]]\nslug = \"b\"\nmessage = \"x\"\nafter = [\"r\"]",
            "comes after r, a race",
        ),
    ];
    for (race, want) in cases {
        let file = fw.fleet_file(
            "bad",
            &format!("[[task]]\nslug = \"r\"\nmessage = \"work\"\n{race}\n"),
        );
        for verb in ["submit", "run"] {
            let run = fw.world.ganger(&["fleet", verb, file.to_str().unwrap()]);
            assert_eq!(
                run.code, 2,
                "{race} ({verb}): {}\n{}",
                run.stdout, run.stderr
            );
            assert!(
                run.stderr.contains(want),
                "{race}: {want:?} not in {}",
                run.stderr
            );
            assert!(run.stderr.trim().lines().count() <= 2, "{}", run.stderr);
        }
    }
    // Nothing made: not even the store, nor a worktree.
    assert!(!fw.world.repo.join(".ganger").exists());
    assert!(!fw.world.worktree("r.1").exists());
}
