//! Two commanders, each its own `ganger mcp` process, on one repository with the stand-in
//! `opencode` (test-support's `fake-opencode.sh`, which appends each prompt's first line to
//! `fake.txt` in its worktree: the witness of which rounds really ran). Ownership holds
//! through the tools as on the command line: one cannot fix the other's task, a transfer
//! hands it on, and a round the old owner sent before the transfer is refused as stale.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::mcp_client;

use ganger_test_support::World;
use mcp_client::{Mcp, text};
use serde_json::json;
use std::time::Duration;

fn lines(world: &World, slug: &str) -> Vec<String> {
    std::fs::read_to_string(world.worktree(slug).join("fake.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn ownership_holds_between_two_servers_and_a_stale_round_is_refused() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    // Alice's server pauses each round before it begins, so that her late fix is still on its
    // way when she hands the task on; Bob's server is named by its client alone.
    let mut alice = Mcp::start(
        &world,
        &["--as", "alice"],
        &[("GANGER_FAULT_PAUSE", "before-begin-round:1500")],
        "alice-client",
    );
    let mut bob = Mcp::start(&world, &[], &[], "bob");

    let started = alice.ok("start", json!({"slug": "t", "brief": "from alice"}));
    assert_eq!(started["schema"], "ganger.detached/1", "{started}");
    assert_eq!(started["round"], 1);
    let report = alice.ok("wait", json!({"slug": "t", "timeout_seconds": 60}));
    assert_eq!(report["schema"], "ganger.round-report/1");
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["owner"], "alice");

    // Bob may not fix Alice's task: a tool error naming the owner, and nothing runs.
    let refused = bob.call("fix", json!({"slug": "t", "brief": "from bob"}));
    assert_eq!(refused["isError"], true, "{refused}");
    let message = text(&refused);
    assert!(
        message.starts_with("error: bob may not send rounds to task t: it is owned by alice\n"),
        "{message}"
    );
    assert_eq!(refused["structuredContent"]["kind"], "invalid");
    // Bob sees the task in the table, filtered by its owner.
    let owned = bob.ok("status", json!({"owner": "alice"}));
    assert_eq!(owned["tasks"][0]["slug"], "t");
    assert_eq!(
        bob.ok("status", json!({"owner": "bob"}))["tasks"],
        json!([])
    );

    // Alice sends another round and, while it is on its way, hands the task to Bob: the two
    // calls run side by side in her server, and the round is refused when it would begin.
    let late = alice.send_call("fix", json!({"slug": "t", "brief": "late from alice"}));
    std::thread::sleep(Duration::from_millis(400));
    let transfer = alice.ok("transfer", json!({"slug": "t", "to": "bob"}));
    assert_eq!(transfer["owner"], "bob", "{transfer}");
    assert_eq!(transfer["generation"], 2, "{transfer}");
    let stale = alice.answer(late);
    assert_eq!(stale["isError"], true, "{stale}");
    assert_eq!(
        text(&stale).lines().next().unwrap(),
        "error: the round for t was sent under generation 1, but the task's ownership changed \
         since (generation 2, owner bob)"
    );

    // Now Bob's round runs, in the same session, and Alice's journal shows the transfer.
    let sent = bob.ok("fix", json!({"slug": "t", "brief": "bob's"}));
    assert_eq!(sent["round"], 2, "{sent}");
    let report = bob.ok("wait", json!({"slug": "t"}));
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["commander"], "bob");
    assert_eq!(lines(&world, "t"), ["from alice", "bob's"]);
    let journal = bob.ok("watch", json!({"timeout_seconds": 5}));
    let kinds: Vec<&str> = journal["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"transferred"), "{journal:#}");
}

/// A client that subscribes to a task's resource hears when its round ends, and reads the
/// report there; the table and the journal are resources too.
#[test]
fn a_subscribed_task_resource_is_updated_when_its_round_ends() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let mut mcp = Mcp::start(&world, &["--as", "alice"], &[], "subscriber");
    let subscribed = mcp.request("resources/subscribe", json!({"uri": "ganger://tasks/t"}));
    assert!(subscribed.get("error").is_none(), "{subscribed}");
    mcp.ok("start", json!({"slug": "t", "brief": "sleep 1"}));
    let is_update = |n: &serde_json::Value| {
        n["method"] == "notifications/resources/updated" && n["params"]["uri"] == "ganger://tasks/t"
    };
    // First the round that runs, then its end.
    mcp.notification(Duration::from_secs(30), is_update);
    mcp.notifications.clear();
    mcp.notification(Duration::from_secs(30), is_update);
    let read = mcp.request("resources/read", json!({"uri": "ganger://tasks/t"}));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    let report: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(report["schema"], "ganger.round-report/1");
    assert_eq!(report["status"], "done", "{report:#}");
    let listed = mcp.request("resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        ["ganger://tasks", "ganger://journal", "ganger://tasks/t"]
    );
    let missing = mcp.request("resources/read", json!({"uri": "ganger://nothing"}));
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no resource"),
        "{missing}"
    );
}

/// A round the old owner queued before a transfer is refused by the scheduler as stale, and
/// the old owner's `watch` wakes with it.
#[test]
fn a_queued_round_of_the_old_owner_is_refused_as_stale_and_watch_wakes_with_it() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let mut alice = Mcp::start(&world, &["--as", "alice"], &[], "alice-client");
    alice.ok("start", json!({"slug": "q", "brief": "from alice"}));
    alice.ok("wait", json!({"slug": "q"}));
    let queued = alice.ok(
        "fix",
        json!({"slug": "q", "brief": "queued by alice", "queue": true}),
    );
    assert_eq!(queued["schema"], "ganger.queued/1", "{queued}");
    alice.ok("transfer", json!({"slug": "q", "to": "bob"}));
    let seen = alice.ok("watch", json!({"timeout_seconds": 0}));
    let last = seen["entries"].as_array().unwrap().last().unwrap()["id"].clone();
    alice.ok("ack", json!({"upto": last}));

    // Alice waits on her journal; the scheduler then finds her round stale.
    let watch = alice.send_call("watch", json!({"timeout_seconds": 60}));
    let mut serve = world.command(&["serve"]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the scheduler in the background"
    )]
    let mut serve = serve
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let woke = alice.answer(watch);
    let _ = serve.kill();
    let _ = serve.wait();
    assert_eq!(woke["isError"], false, "{woke}");
    let entries = woke["structuredContent"]["entries"].as_array().unwrap();
    let stale = entries
        .iter()
        .find(|e| e["kind"] == "queue-stale")
        .unwrap_or_else(|| panic!("{woke:#}"));
    assert_eq!(stale["task"], "q");
    let summary = stale["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("a queued fix was not delivered: ") && summary.contains("bob"),
        "{summary}"
    );
    // Nothing reached the worker.
    assert_eq!(lines(&world, "q"), ["from alice"]);
}
