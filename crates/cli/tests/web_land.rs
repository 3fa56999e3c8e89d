//! The merge queue through the HTTP API of `ganger serve --listen` (issue 41): `POST /api/land`
//! queues tasks as the token's commander, only its own tasks (or those whose owner allows it),
//! never from a read-only token, and bad input is the CLI's refusal with nothing queued; `GET
//! /api/land` is `ganger land status --json`; `GET /api/conflicts` the predicted conflicts;
//! all three in the OpenAPI description.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world::land::{good, land_world, start_as};
use crate::web_world::{ALICE, BOB, Served, VERA, write_tokens};
use serde_json::{Value, json};

/// The tasks in the queue, by `GET /api/land`.
fn queued(served: &Served) -> Vec<String> {
    let status = served.get("/api/land");
    assert_eq!(status.status, 200, "{}", status.body);
    status.json()["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["task"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn tasks_are_queued_to_land_through_the_api_as_the_tokens_commander() {
    // serve's lander lands what is queued; this test is about the queueing, so the lander's
    // batch is held in its checks (while `.git/hold` is there) and the items stay queued
    // however slowly the test runs.
    let world = land_world(HOLD);
    good(&world, Some("alice"), "ok");
    good(&world, Some("alice"), "ok2");
    good(&world, Some("bob"), "bobs");
    good(&world, Some("alice"), "shared");
    world
        .ganger(&["allow", "shared", "bob", "--as", "alice"])
        .expect_code(0);
    // A task whose check failed.
    start_as(&world, Some("alice"), "red", "echo 'broken(' > api.sh", 1);
    let hold = Hold::new(&world);
    write_tokens(&world);
    let served = Served::start(world);
    let post = |token: &str, body: Value| {
        served.request("POST", "/api/land", Some(token), Some(&body), &[])
    };

    // Each refusal: its status, its message, and nothing queued.
    let refusals: [(&str, Value, u16, &str); 7] = [
        (VERA, json!({"tasks": ["ok"]}), 403, "read-only token"),
        (
            ALICE,
            json!({"tasks": ["ok", "red"]}),
            400,
            "round 1 of red did not pass its checks",
        ),
        (
            ALICE,
            json!({"tasks": ["ok", "nosuch"]}),
            404,
            "no task nosuch",
        ),
        (
            ALICE,
            json!({"tasks": ["ok", "bobs"]}),
            403,
            "alice may not land task bobs",
        ),
        (
            ALICE,
            json!({"tasks": ["ok", "ok"]}),
            400,
            "task ok is named twice",
        ),
        (ALICE, json!({"tasks": []}), 400, "names no task to land"),
        (
            ALICE,
            json!({"tasks": ["ok"], "run": true}),
            400,
            "unknown field `run`",
        ),
    ];
    for (token, body, status, message) in refusals {
        let refused = post(token, body.clone());
        assert_eq!(refused.status, status, "{body}: {}", refused.body);
        let error = refused.json();
        assert_eq!(error["schema"], "ganger.error/1");
        assert!(
            error["error"].as_str().unwrap().contains(message),
            "{body}: {error}"
        );
        assert_eq!(queued(&served), Vec::<String>::new(), "{body}");
    }

    // Alice queues her own; the answer is `ganger.land/1`, the status the CLI's document.
    let landed = post(ALICE, json!({"tasks": ["ok", "ok2"], "priority": 2}));
    assert_eq!(landed.status, 200, "{}", landed.body);
    let report = landed.json();
    assert_eq!(report["schema"], "ganger.land/1");
    let tasks: Vec<&str> = report["queued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, ["ok", "ok2"]);
    assert_eq!(queued(&served), ["ok", "ok2"]);
    let cli = served.world.ganger(&["land", "status", "--json"]);
    cli.expect_code(0);
    assert_eq!(served.get("/api/land").json(), cli.json());
    assert_eq!(cli.json()["queue"][0]["priority"], 2);
    // Queued once: a second time is refused.
    let again = post(ALICE, json!({"tasks": ["ok"]}));
    assert_eq!(again.status, 400, "{}", again.body);
    assert!(
        again.body.contains("queued to land already"),
        "{}",
        again.body
    );

    // Bob lands his own, and alice's that she allows him; the journal says who queued each.
    let bobs = post(BOB, json!({"tasks": ["shared", "bobs"]}));
    assert_eq!(bobs.status, 200, "{}", bobs.body);
    assert_eq!(queued(&served), ["ok", "ok2", "shared", "bobs"]);
    let journal = served.get("/api/journal").json();
    let queuers: Vec<(String, String)> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "land-queued")
        .map(|e| {
            (
                e["slug"].as_str().unwrap().to_owned(),
                e["commander"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        queuers,
        [
            ("ok".to_owned(), "alice".to_owned()),
            ("ok2".to_owned(), "alice".to_owned()),
            ("shared".to_owned(), "bob".to_owned()),
            ("bobs".to_owned(), "bob".to_owned())
        ]
    );

    // No conflict predicted yet; the description names the paths.
    let conflicts = served.get("/api/conflicts");
    assert_eq!(conflicts.status, 200, "{}", conflicts.body);
    assert_eq!(
        conflicts.json(),
        json!({"schema": "ganger.web-conflicts/1", "conflicts": []})
    );
    let api = served.get("/api/openapi.json").json();
    assert!(api["paths"]["/api/land"]["post"].is_object());
    assert!(api["paths"]["/api/land"]["get"].is_object());
    assert!(api["paths"]["/api/conflicts"]["get"].is_object());
    drop(hold);
}

/// A check that waits while the repository's `.git/hold` is there (at most two minutes).
const HOLD: &str = "[[checks]]\nname = \"hold\"\ncommand = \"h=$(git rev-parse --git-common-dir)/hold; \
                    for i in $(seq 2400); do [ -e $h ] || exit 0; sleep 0.05; done\"\n";

/// `.git/hold` while it lives: the lander's checks wait ([`HOLD`]).
struct Hold(std::path::PathBuf);

impl Hold {
    fn new(world: &ganger_test_support::World) -> Hold {
        let common = world.git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]);
        let path = std::path::PathBuf::from(common.trim()).join("hold");
        std::fs::write(&path, "").unwrap();
        Hold(path)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn predicted_conflicts_are_served_with_their_files_and_lines() {
    let world = land_world("");
    start_as(
        &world,
        Some("alice"),
        "t1",
        "sed -i '10,12s/.*/t1 was here/' notes.txt",
        0,
    );
    start_as(
        &world,
        Some("alice"),
        "t2",
        "sed -i '11s/.*/t2 was here/' notes.txt",
        0,
    );
    write_tokens(&world);
    let served = Served::start(world);
    let conflicts = served.request("GET", "/api/conflicts", Some(VERA), None, &[]);
    assert_eq!(conflicts.status, 200, "{}", conflicts.body);
    let status = served.world.ganger(&["status", "--json"]).json();
    assert_eq!(conflicts.json()["conflicts"], status["conflicts"]);
    let found = &conflicts.json()["conflicts"][0];
    assert_eq!(
        (found["task"].as_str(), found["other"].as_str()),
        (Some("t1"), Some("t2"))
    );
    assert_eq!(found["files"][0]["path"], "notes.txt");
}
