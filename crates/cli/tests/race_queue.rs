//! Races through the scheduler's queue (`race --queue`, and MCP's `race` tool with `queue`):
//! the attempts are queued as `start --queue` queues a task, and `ganger serve` starts them
//! under its limits. Witnesses outside ganger: the model server's in-flight counts, the
//! workers' start and end times, and the queue's rows read from the database itself.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::fleet_world;
use crate::mcp_client;

use fleet_world::FleetWorld;
use ganger_fake_llm::Script;
use mcp_client::{Mcp, text};
use serde_json::Value;

/// `ganger serve ARGS` in the background, killed when dropped.
struct Serve(std::process::Child);

impl Serve {
    fn start(fw: &FleetWorld, args: &[&str]) -> Serve {
        let mut all = vec!["serve"];
        all.extend_from_slice(args);
        // Its output is kept in the world's directory, for a test that fails or hangs.
        let log = std::fs::File::create(fw.world.root().join("serve.log")).unwrap();
        #[expect(
            clippy::disallowed_methods,
            reason = "the test runs the daemon in the background"
        )]
        let child = fw
            .world
            .command(&all)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        Serve(child)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn race(fw: &FleetWorld, more: &[&str]) -> (i32, Value, String) {
    let mut args = vec![
        "race",
        "r",
        "--queue",
        "--message",
        "work",
        "--attempts",
        "command*3",
        "--check",
        "true",
        "--json",
    ];
    args.extend_from_slice(more);
    let run = fw.world.ganger(&args);
    (run.code, run.json(), run.stderr)
}

fn status(report: &Value, number: usize) -> String {
    report["attempts"][number - 1]["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_queued_race_runs_its_attempts_under_serves_limit() {
    // Each attempt's model request is held a second: attempts run at once would overlap.
    let fw = FleetWorld::new(Script::new(), 1000);
    let _serve = Serve::start(&fw, &["--max", "1"]);
    let (code, report, stderr) = race(&fw, &[]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert_eq!(report["status"], "won", "{report:#}");
    for number in 1..=3 {
        assert_eq!(status(&report, number), "done", "{report:#}");
    }
    // One at a time: serve's --max 1 held the race's attempts (and nothing else ran).
    fw.ran_once_one_at_a_time(&["r.1", "r.2", "r.3"]);
    assert!(
        fw.llm.in_flight().values().all(|f| f.max == 1),
        "{:?}",
        fw.llm.in_flight()
    );
    // Each attempt was a queue item, delivered once, under the race's fleet.
    let rows = fw.settled_queue_rows();
    let attempts: Vec<_> = rows.iter().filter(|r| is_attempt(&r.0)).collect();
    assert_eq!(attempts.len(), 3, "{rows:?}");
    assert!(
        attempts.iter().all(|r| r.1 == "start" && r.2 == "ended"),
        "{rows:?}"
    );
}

/// Whether `slug` is an attempt of race `r` (`r.N`), not a judge (`r.jAvB`).
fn is_attempt(slug: &str) -> bool {
    slug.strip_prefix("r.")
        .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// The judges' review rounds of a `--queue` race go through serve's queue and limits too:
/// each of the 6 judgements of 3 passing attempts is a `start` item, delivered once, and
/// serve's `--max 1` holds them with the attempts (no two rounds overlap, the model never
/// has two requests at once); every verdict is the judge's answer.
#[test]
fn a_queued_races_judges_go_through_serves_queue_and_limit() {
    let fw = FleetWorld::new(Script::new(), 200);
    let _serve = Serve::start(&fw, &["--max", "1"]);
    let (code, report, stderr) = race(&fw, &[]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert_eq!(report["status"], "won", "{report:#}");
    let rows = fw.settled_queue_rows();
    let judges: Vec<_> = rows
        .iter()
        .filter(|r| r.0.starts_with("r.j"))
        .map(|r| (r.0.as_str(), r.1.as_str(), r.2.as_str()))
        .collect();
    let mut want: Vec<String> = Vec::new();
    for a in 1..=3 {
        for b in (1..=3).filter(|b| *b != a) {
            want.push(format!("r.j{a}v{b}"));
        }
    }
    let mut slugs: Vec<&str> = judges.iter().map(|j| j.0).collect();
    slugs.sort_unstable();
    assert_eq!(slugs, want, "{rows:?}");
    assert!(
        judges.iter().all(|j| j.1 == "start" && j.2 == "ended"),
        "{rows:?}"
    );
    let rounds: Vec<String> = (1..=3)
        .map(|n| format!("r.{n}"))
        .chain(want.iter().cloned())
        .collect();
    fw.ran_once_one_at_a_time(&rounds);
    assert!(
        fw.llm.in_flight().values().all(|f| f.max == 1),
        "{:?}",
        fw.llm.in_flight()
    );
    // Each verdict is its delivered judge's answer (the worker's `DONE: SLUG finished`).
    let reviews = report["verdicts"].as_array().unwrap();
    assert_eq!(reviews.len(), 6, "{report:#}");
    for review in reviews {
        let judge = format!("r.j{}v{} finished", review["a"], review["b"]);
        assert!(
            review["reasons"].as_str().unwrap().contains(&judge),
            "{review:#}"
        );
    }
}

#[test]
fn first_green_through_the_queue_withdraws_the_attempts_not_started() {
    let fw = FleetWorld::new(Script::new(), 1000);
    let _serve = Serve::start(&fw, &["--max", "1"]);
    let (code, report, stderr) = race(&fw, &["--first-green"]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert_eq!(report["winner_task"], "r.1", "{report:#}");
    assert_eq!(report["rule"], "first-green", "{report:#}");
    // Attempt 3 waited behind attempt 2 (--max 1): withdrawn from the queue, never run.
    assert_eq!(status(&report, 3), "not-started", "{report:#}");
    let reason = report["attempts"][2]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "not started: cancelled: attempt 1 passed first (--first-green)"
    );
    assert!(fw.runs("r.3").is_empty(), "r.3 ran");
    // Attempt 2 was either still queued too, or started as attempt 1 ended and cancelled.
    assert!(
        ["not-started", "cancelled"].contains(&status(&report, 2).as_str()),
        "{report:#}"
    );
    let rows = fw.settled_queue_rows();
    let three = rows.iter().find(|r| r.0 == "r.3").unwrap();
    assert_eq!(three.2, "refused", "{rows:?}");
    // Nothing the race withdrew starts later.
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(fw.runs("r.3").is_empty(), "r.3 ran after the race ended");
}

/// An MCP commander's `race` with `queue`: the attempts go through serve's queue (each a
/// start item of the race's fleet, delivered once), and the answer is the race's end; with
/// `max` (serve's limits decide) it is refused with nothing queued.
#[test]
fn the_mcp_race_tool_queues_the_attempts_for_serve() {
    let fw = FleetWorld::new(Script::new(), 0);
    let _serve = Serve::start(&fw, &["--max", "1"]);
    let mut mcp = Mcp::start(&fw.world, &["--as", "alice"], &[], "race-queue-test");
    let refused = mcp.call(
        "race",
        serde_json::json!({"slug": "m", "brief": "work", "attempts": "command*2",
                           "checks": ["true"], "queue": true, "max": 1}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        text(&refused).contains("--queue takes no --max"),
        "{refused}"
    );
    assert!(fw.queue_rows().is_empty(), "{:?}", fw.queue_rows());
    let report = mcp.ok(
        "race",
        serde_json::json!({"slug": "m", "brief": "work", "attempts": "command*2",
                           "checks": ["true"], "queue": true}),
    );
    assert_eq!(report["status"], "won", "{report:#}");
    assert_eq!(report["owner"], "alice", "{report:#}");
    let rows = fw.settled_queue_rows();
    let attempts: Vec<_> = rows
        .iter()
        .filter(|r| r.0.starts_with("m.") && !r.0.starts_with("m.j"))
        .collect();
    assert_eq!(attempts.len(), 2, "{rows:?}");
    assert!(
        attempts.iter().all(|r| r.1 == "start" && r.2 == "ended"),
        "{rows:?}"
    );
    for number in 1..=2 {
        assert_eq!(fw.runs(&format!("m.{number}")).len(), 1, "m.{number}");
    }
}
