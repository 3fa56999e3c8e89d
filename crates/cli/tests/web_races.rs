//! Races through the HTTP API of `ganger serve --listen`: `POST /api/races` runs one as the
//! token's commander and answers `ganger.race/1` once it has ended, `GET /api/races/{slug}` is
//! its report, bad input is the CLI's refusal with nothing made, a read-only token may look
//! and not race. The `command` agent (a shell script) plays the attempts and the judge.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world::{ALICE, Served, VERA, write_tokens};
use ganger_test_support::World;
use serde_json::json;

/// An attempt writes the brief's first word to answer.txt; the judge always answers A.
const AGENT: &str = r#"p=$(cat); case "$p" in *"Your role: judge"*) echo "WINNER: A"; echo "A is fine";; *) echo "$p" | head -c 5 > answer.txt; echo "wrote it";; esac"#;

#[test]
fn a_race_runs_through_the_api_as_the_tokens_commander() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(AGENT, "", "");
    write_tokens(&world);
    let served = Served::start(world);
    let as_who = |token: &str, body: serde_json::Value| {
        served.request("POST", "/api/races", Some(token), Some(&body), &[])
    };
    let race = json!({"slug": "r", "message": "hello", "attempts": "command*2",
                      "checks": ["test -f answer.txt"], "max": 1});
    // A read-only token may not race; bad input is 400 and makes nothing.
    assert_eq!(as_who(VERA, race.clone()).status, 403);
    let bad = as_who(
        ALICE,
        json!({"slug": "r", "message": "x", "attempts": "command*0"}),
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.json()["schema"], "ganger.error/1");
    assert_eq!(served.get("/api/races/r").status, 404);
    assert!(!served.world.worktree("r.1").exists());

    let ran = as_who(ALICE, race);
    assert_eq!(ran.status, 200, "{}", ran.body);
    let report = ran.json();
    assert_eq!(report["schema"], "ganger.race/1");
    assert_eq!(report["status"], "won", "{report:#}");
    assert_eq!(report["owner"], "alice");
    // Always A: both pairs split, and the tie-breaks decide.
    assert_eq!(report["verdicts"].as_array().unwrap().len(), 2);
    assert!(
        report["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["ties"] == 1)
    );
    let got = served.get("/api/races/r");
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.json()["winner_task"], report["winner_task"]);
    // `max: 1`: attempt 2 was made after attempt 1's round ended.
    let journal = served
        .world
        .ganger(&["watch", "--as", "alice", "--json"])
        .json();
    let order: Vec<String> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["task"] == "r.1" || e["task"] == "r.2")
        .filter(|e| e["kind"] == "task-created" || e["kind"] == "round-finished")
        .map(|e| {
            format!(
                "{} {}",
                e["task"].as_str().unwrap(),
                e["kind"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            "r.1 task-created",
            "r.1 round-finished",
            "r.2 task-created",
            "r.2 round-finished"
        ]
    );
    // The OpenAPI description names both paths.
    let api = served.get("/api/openapi.json").json();
    assert!(api["paths"]["/api/races"]["post"].is_object());
    assert!(api["paths"]["/api/races/{slug}"]["get"].is_object());
}

#[test]
fn a_race_posted_with_detach_answers_at_once_and_runs_to_its_end_in_the_background() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // The attempts wait for `release`: the answer cannot wait for the race's end.
    let release = world.root().join("release");
    world.use_command_agent(
        &format!(
            "while [ ! -e '{}' ]; do sleep 0.05; done; {AGENT}",
            release.display()
        ),
        "",
        "",
    );
    write_tokens(&world);
    let served = Served::start(world);
    let race = json!({"slug": "d", "message": "hello", "attempts": "command*2",
                      "checks": ["test -f answer.txt"], "detach": true});
    let started = served.request("POST", "/api/races", Some(ALICE), Some(&race), &[]);
    assert_eq!(started.status, 200, "{}", started.body);
    let report = started.json();
    assert_eq!(report["schema"], "ganger.race/1");
    assert_eq!(report["status"], "running", "{report:#}");
    assert_eq!(report["owner"], "alice");
    std::fs::write(&release, "").unwrap();
    let won = ganger_test_support::wait_until(std::time::Duration::from_secs(90), || {
        served.get("/api/races/d").json()["status"] == "won"
    });
    assert!(won, "{:#}", served.get("/api/races/d").json());
    // The same race again is its report, not a second race.
    let again = served.request("POST", "/api/races", Some(ALICE), Some(&race), &[]);
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json()["status"], "won");
}

/// `"queue": true`: the attempts go through the scheduler's queue (here the serving process's
/// own scheduler), each a start item of the race's fleet; with `max` it is 400, nothing made.
#[test]
fn a_race_posted_with_queue_goes_through_the_schedulers_queue() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(AGENT, "", "");
    write_tokens(&world);
    let served = Served::start(world);
    let post = |body: serde_json::Value| {
        served.request("POST", "/api/races", Some(ALICE), Some(&body), &[])
    };
    let bad = post(
        json!({"slug": "q", "message": "hello", "attempts": "command*2",
                          "checks": ["test -f answer.txt"], "queue": true, "max": 1}),
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("--queue takes no --max"), "{}", bad.body);
    assert_eq!(served.get("/api/races/q").status, 404);
    let race = json!({"slug": "q", "message": "hello", "attempts": "command*2",
                      "checks": ["test -f answer.txt"], "queue": true, "detach": true});
    let started = post(race);
    assert_eq!(started.status, 200, "{}", started.body);
    let won = ganger_test_support::wait_until(std::time::Duration::from_secs(90), || {
        served.get("/api/races/q").json()["status"] == "won"
    });
    assert!(won, "{:#}", served.get("/api/races/q").json());
    let db = rusqlite::Connection::open(served.world.repo.join(".ganger/state.db")).unwrap();
    let items: Vec<(String, String, String)> = db
        .prepare("SELECT slug, kind, fleet FROM queue ORDER BY slug")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = |slug: &str| (slug.to_owned(), "start".to_owned(), "race:q".to_owned());
    // The attempts, then the judges' review rounds: all through serve's queue.
    assert_eq!(
        items,
        [want("q.1"), want("q.2"), want("q.j1v2"), want("q.j2v1")]
    );
}
