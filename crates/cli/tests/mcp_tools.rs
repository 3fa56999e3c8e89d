//! The reading tools of `ganger mcp` on a task of two rounds, with the stand-in `opencode`
//! (which appends each prompt's first line to `fake.txt` in its worktree): the diff whole, by
//! round and page by page, any round's report, the log's tail, the table filtered by label,
//! groups, agents and models, then rewind and merge.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::mcp_client;

use ganger_test_support::World;
use mcp_client::{Mcp, text};
use serde_json::{Value, json};

fn slugs(list: &Value) -> Vec<String> {
    list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_reading_tools_show_a_task_round_by_round_and_page_by_page() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    let mut mcp = Mcp::start(&world, &["--as", "alice"], &[], "tools-test");
    mcp.ok(
        "start",
        json!({"slug": "t", "brief": "first line\nmore", "labels": {"team": "red"}}),
    );
    assert_eq!(mcp.ok("wait", json!({"slug": "t"}))["status"], "done");
    mcp.ok("fix", json!({"slug": "t", "brief": "second line"}));
    assert_eq!(mcp.ok("wait", json!({"slug": "t"}))["round"], 2);

    // The whole diff has both rounds' lines; round 2's only its own.
    let whole = mcp.ok("diff", json!({"slug": "t"}));
    assert_eq!(whole["schema"], "ganger.diff-page/1");
    let patch = whole["text"].as_str().unwrap().to_owned();
    assert!(patch.contains("+first line\n+second line\n"), "{patch}");
    assert_eq!(whole["next_offset"], Value::Null);
    assert_eq!(whole["total_bytes"], patch.len());
    let round2 = mcp.ok("diff", json!({"slug": "t", "round": 2}));
    let round2 = round2["text"].as_str().unwrap();
    assert!(
        round2.contains("+second line") && !round2.contains("+first line"),
        "{round2}"
    );
    let stat = mcp.ok("diff", json!({"slug": "t", "stat": true}));
    assert!(
        stat["text"].as_str().unwrap().contains("fake.txt"),
        "{stat}"
    );
    // Page by page, the pages make the whole patch, each ending at a line's end.
    let mut paged = String::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let page = mcp.ok("diff", json!({"slug": "t", "offset": offset, "limit": 40}));
        let piece = page["text"].as_str().unwrap();
        paged.push_str(piece);
        pages += 1;
        match page["next_offset"].as_u64() {
            Some(next) => {
                assert!(piece.ends_with('\n'), "{piece:?}");
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(paged, patch);
    assert!(pages > 2, "{pages} pages");
    let refused = mcp.call("diff", json!({"slug": "t", "round": 9}));
    assert_eq!(
        text(&refused),
        "error: task t has no round 9 (it has 2)\n",
        "{refused}"
    );

    // Any round's report; the log's tail.
    let first = mcp.ok("report", json!({"slug": "t", "round": 1}));
    assert_eq!(
        (first["round"].clone(), first["kind"].clone()),
        (json!(1), json!("start"))
    );
    let log = mcp.ok("log", json!({"slug": "t", "lines": 2}));
    assert_eq!(log["schema"], "ganger.log-tail/1");
    assert_eq!(log["lines"].as_array().unwrap().len(), 2, "{log:#}");

    // The table by label and by owner; groups.
    assert_eq!(
        slugs(&mcp.ok("status", json!({"label": "team=red"}))),
        ["t"]
    );
    assert!(slugs(&mcp.ok("status", json!({"label": "team=blue"}))).is_empty());
    assert!(slugs(&mcp.ok("status", json!({"owner": "bob"}))).is_empty());
    let groups = mcp.ok("groups", json!({"key": "team"}));
    assert_eq!(groups["groups"][0]["value"], "red", "{groups:#}");

    // The agents, and the stand-in's models.
    let agents = mcp.ok("agents", json!({}));
    assert_eq!(agents["schema"], "ganger.agents/1");
    let models = mcp.ok("models", json!({"agent": "opencode"}));
    assert_eq!(models["catalog"], true, "{models:#}");
    assert!(
        models["models"]
            .as_array()
            .unwrap()
            .contains(&json!("mock/scripted")),
        "{models:#}"
    );

    // Back to round 1, then merged.
    let rewound = mcp.ok("rewind", json!({"slug": "t", "to": 1}));
    assert_eq!(rewound["schema"], "ganger.rewind/1");
    let merged = mcp.call("merge", json!({"slug": "t"}));
    assert_eq!(merged["structuredContent"]["outcome"], "merged", "{merged}");
    assert!(
        text(&merged).starts_with("merged agent/t into main (merge, rounds 1"),
        "{merged}"
    );
    assert_eq!(world.git(&["show", "main:fake.txt"]), "first line");
}
