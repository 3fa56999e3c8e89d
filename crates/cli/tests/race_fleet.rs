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

/// `fleet run` of `file` (exit 0 when the race is `won`, else 1: a task failed), then the
/// race `r`'s report once it has ended `status`.
fn run_to_the_races_end(fw: &FleetWorld, file: &std::path::Path, status: &str) -> Value {
    let run = fw
        .world
        .ganger(&["fleet", "run", file.to_str().unwrap(), "--json"]);
    let code = if status == "won" { 0 } else { 1 };
    assert_eq!(run.code, code, "{}\n{}", run.stdout, run.stderr);
    let report = ended_report(fw, "r");
    assert_eq!(report["status"], status, "{report:#}");
    report
}

const FLEET: &str = "name = \"crew\"\n[limits]\nglobal = 1\n\
    [[task]]\nslug = \"r\"\nmessage = \"work\"\nattempts = \"command*2,opencode\"\nchecks = [\"true\"]\n\
    [[task]]\nslug = \"plain\"\nmessage = \"work\"\n";

#[test]
fn a_fleet_files_race_runs_its_attempts_under_the_fleet_and_picks_a_winner() {
    let fw = FleetWorld::new(Script::new(), 300);
    let file = fw.fleet_file("crew", FLEET);
    let report = run_to_the_races_end(&fw, &file, "won");
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
    fw.ran_once_one_at_a_time(&["r.1", "r.2", "r.3", "plain"]);
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

/// When the race `slug` ended (Unix ms), read from the database itself.
fn race_ended_at(fw: &FleetWorld, slug: &str) -> Option<i64> {
    let db = rusqlite::Connection::open(fw.world.repo.join(".ganger/state.db")).unwrap();
    db.query_row(
        "SELECT ended_at FROM races WHERE slug = ?1",
        [slug],
        |row| row.get(0),
    )
    .unwrap()
}

/// (state, reason) of the queue's item for `slug`, read from the database itself.
fn item_of(fw: &FleetWorld, slug: &str) -> Option<(String, Option<String>)> {
    fw.queue_rows()
        .into_iter()
        .find(|row| row.0 == slug)
        .map(|row| (row.2, row.3))
}

/// A fleet of a race `r` of two attempts checked by `check`, and a task `next` after it.
fn race_then_next(check: &str) -> (FleetWorld, std::path::PathBuf) {
    let fw = FleetWorld::new(Script::new(), 0);
    let file = fw.fleet_file(
        "crew",
        &format!(
            "name = \"crew\"\n\
             [[task]]\nslug = \"r\"\nmessage = \"work\"\nattempts = \"command*2\"\nchecks = [\"{check}\"]\n\
             [[task]]\nslug = \"next\"\nmessage = \"work\"\nafter = [\"r\"]\n"
        ),
    );
    (fw, file)
}

#[test]
fn a_task_after_a_race_starts_once_the_race_has_a_winner() {
    let (fw, file) = race_then_next("true");
    run_to_the_races_end(&fw, &file, "won");
    // The race was judged (both attempts passed), and the task after it started only once
    // the race had its winner: after its judges' rounds and its end.
    let ended_ms = race_ended_at(&fw, "r").expect("the race has ended");
    let next = fw.runs("next");
    assert_eq!(next.len(), 1, "next ran {} times", next.len());
    let judges: Vec<(u128, u128)> = ["r.j1v2", "r.j2v1"]
        .iter()
        .flat_map(|slug| fw.runs(slug))
        .collect();
    assert_eq!(judges.len(), 2, "{judges:?}");
    assert!(
        judges.iter().all(|j| next[0].0 >= j.1),
        "next started at {} before a judge ended: {judges:?}",
        next[0].0
    );
    assert!(
        next[0].0 >= ended_ms as u128 * 1_000_000,
        "next started at {} ns, the race ended at {ended_ms} ms",
        next[0].0
    );
    assert_eq!(item_of(&fw, "next").unwrap().0, "ended");
}

#[test]
fn a_task_after_a_race_without_a_winner_is_skipped_as_after_a_failed_task() {
    let (fw, file) = race_then_next("false");
    run_to_the_races_end(&fw, &file, "failed");
    // The item is refused with the fleet's words for a failed dependency, and never ran.
    let deadline = Instant::now() + Duration::from_secs(30);
    let item = loop {
        let item = item_of(&fw, "next").unwrap();
        if item.0 != "queued" || Instant::now() > deadline {
            break item;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(
        item,
        (
            "refused".to_owned(),
            Some("it comes after r, which ended failed".to_owned())
        )
    );
    assert!(fw.runs("next").is_empty(), "next ran");
}

/// A race task's `budget` is the whole race's, as `race --budget-usd` makes it: the stand-in
/// spends $0.001 at each of its two steps, so with $0.003 and one round at a time attempt 1
/// passes ($0.002), attempt 2 is stopped at its first step (the race's $0.003), and attempt 3
/// is refused at delivery; the one that passed wins. Neither attempt had a budget of its own.
#[test]
fn a_fleet_race_tasks_budget_caps_the_whole_race() {
    let fw = FleetWorld::new(Script::new(), 0);
    let file = fw.fleet_file(
        "crew",
        "name = \"crew\"\n[limits]\nglobal = 1\n\
         [[task]]\nslug = \"r\"\nmessage = \"sleep 1\"\nattempts = \"opencode*3\"\n\
         checks = [\"true\"]\nbudget = { usd = 0.003 }\n",
    );
    let run = fw.world.ganger(&["fleet", "run", file.to_str().unwrap()]);
    assert_ne!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let report = ended_report(&fw, "r");
    assert_eq!(report["status"], "won", "{report:#}");
    assert_eq!(report["winner_task"], "r.1", "{report:#}");
    assert_eq!(report["rule"], "only-survivor", "{report:#}");
    let rows = report["attempts"].as_array().unwrap();
    assert_eq!(rows[1]["status"], "cancelled", "{report:#}");
    let why = rows[1]["reason"].as_str().unwrap();
    assert!(
        why.contains("budget of $0.0030 for race r reached"),
        "{why}"
    );
    assert_eq!(rows[2]["status"], "not-started", "{report:#}");
    let why = rows[2]["reason"].as_str().unwrap();
    assert!(
        why.contains("budget of $0.0030 for race r reached"),
        "{why}"
    );
    assert!(fw.runs("r.3").is_empty(), "r.3 ran");
    // The attempts' own budgets are unset: it is the race's.
    let status = fw.world.ganger(&["status", "r.1", "--json"]).json();
    assert!(status["budget"]["task"].is_null(), "{status:#}");
}
