//! The merge queue's MCP tools (issue 41): `land` queues a task only for its owner or a
//! commander the owner allows, and with `run` lands the queue in the call; `land_status`
//! shows the batch. Real `ganger mcp` processes, real git and the `command` agent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::land_world::command_world;
use crate::mcp_client;

use mcp_client::{Mcp, text};
use serde_json::json;

#[test]
fn land_queues_for_the_owner_or_an_allowed_commander_only_and_lands_the_queue() {
    let world = command_world(
        "eval \"$(cat)\"",
        "\n[[checks]]\nname = \"tests\"\ncommand = \"true\"\n",
    );
    for slug in ["a", "b"] {
        world
            .ganger(&[
                "start",
                slug,
                "--message",
                &format!("echo {slug} > {slug}.txt"),
                "--as",
                "alice",
            ])
            .expect_code(0);
    }
    world
        .ganger(&["allow", "b", "carol", "--as", "alice"])
        .expect_code(0);

    // Bob neither owns a nor is allowed: refused, nothing queued.
    let mut bob = Mcp::start(&world, &["--as", "bob"], &[], "bob-client");
    let refused = bob.call("land", json!({"slugs": ["a"]}));
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("alice"), "{}", text(&refused));
    let status = bob.ok("land_status", json!({}));
    assert_eq!(status["schema"], "ganger.land-status/1");
    assert_eq!(status["queue"], json!([]), "{status}");
    // Unknown arguments are refused as the command line refuses unknown options.
    let odd = bob.call("land", json!({"slugs": ["a"], "force": true}));
    assert_eq!(odd["isError"], true, "{odd}");

    // Carol, whom alice allows on b, queues b; alice queues a and lands the queue.
    let mut carol = Mcp::start(&world, &["--as", "carol"], &[], "carol-client");
    let queued = carol.ok("land", json!({"slugs": ["b"]}));
    assert_eq!(queued["schema"], "ganger.land/1");
    assert_eq!(queued["queued"][0]["task"], "b", "{queued}");
    let mut alice = Mcp::start(&world, &["--as", "alice"], &[], "alice-client");
    let landed = alice.ok("land", json!({"slugs": ["a"], "run": true}));
    assert_eq!(landed["batches"][0]["outcome"], "landed", "{landed}");
    let mut tasks: Vec<String> = landed["batches"][0]["landed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["a", "b"]);
    assert_eq!(world.git(&["show", "main:a.txt"]), "a");
    assert_eq!(world.git(&["show", "main:b.txt"]), "b");
    let status = bob.ok("land_status", json!({}));
    assert_eq!(status["recent"][0]["state"], "landed", "{status}");
}
