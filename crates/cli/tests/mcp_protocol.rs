//! `ganger mcp` as a client sees it, over stdio: every tool's schema, bad arguments of every
//! kind answered as tool errors with the command line's message (never a protocol error), and
//! a call that blocks holding up none of the others.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::mcp_client;

use ganger_test_support::World;
use mcp_client::{Mcp, text};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
}

/// Each tool and its required arguments, in the catalog's order.
const TOOLS: &[(&str, &[&str])] = &[
    ("start", &["brief", "slug"]),
    ("wait", &["slug"]),
    ("status", &[]),
    ("report", &["slug"]),
    ("diff", &["slug"]),
    ("log", &["slug"]),
    ("fix", &["brief", "slug"]),
    ("merge", &["slug"]),
    ("cancel", &["slug"]),
    ("rewind", &["slug", "to"]),
    ("plan", &["brief", "slug"]),
    ("approve", &["slug"]),
    ("reject", &["notes", "slug"]),
    ("race", &["attempts", "brief", "slug"]),
    ("race_status", &["slug"]),
    ("land", &[]),
    ("land_status", &[]),
    ("assign", &["slug"]),
    ("transfer", &["slug", "to"]),
    ("release", &["slug"]),
    ("policy", &["policy", "slug"]),
    ("allow", &["names", "slug"]),
    ("broadcast", &["brief"]),
    ("fleet_run", &["file"]),
    ("fleet_submit", &["file"]),
    ("fleet_status", &[]),
    ("groups", &["key"]),
    ("watch", &[]),
    ("ack", &["upto"]),
    ("agents", &[]),
    ("models", &["agent"]),
];

#[test]
fn every_tool_has_a_closed_object_schema_with_its_required_arguments_and_a_description() {
    let world = world();
    let mut mcp = Mcp::start(&world, &["--as", "alice"], &[], "protocol-test");
    let listed = mcp.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for tool in tools {
        let name = tool["name"].as_str().unwrap().to_owned();
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
        let mut required: Vec<String> = schema["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        required.sort();
        // Every argument is documented for the model.
        let no_properties = serde_json::Map::new();
        let properties = schema["properties"].as_object().unwrap_or(&no_properties);
        for (arg, property) in properties {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| d.len() > 8),
                "{name}.{arg}: {property}"
            );
        }
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 40),
            "{name}"
        );
        seen.push((name, required));
    }
    let expected: Vec<(String, Vec<String>)> = TOOLS
        .iter()
        .map(|(name, required)| {
            (
                (*name).to_owned(),
                required.iter().map(|r| (*r).to_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(seen, expected);
    // The server teaches the loop when a client connects.
    let init = mcp.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "again", "version": "1"}}),
    );
    let instructions = init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("`wait`"), "{init}");
}

/// A tool error whose text is `error: MESSAGE` and whose JSON is `ganger.error/1`.
fn refused(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let error = &result["structuredContent"];
    assert_eq!(error["schema"], "ganger.error/1", "{result}");
    assert_eq!(error["exit_code"], 2, "{result}");
    let text = text(result);
    assert_eq!(
        text.lines().next().unwrap(),
        format!("error: {}", error["error"].as_str().unwrap())
    );
    error["error"].as_str().unwrap().to_owned()
}

#[test]
fn bad_arguments_to_every_tool_are_tool_errors_that_say_what_is_wrong() {
    let world = world();
    let mut mcp = Mcp::start(
        &world,
        &[],
        &[("GANGER_COMMANDER", "alice")],
        "protocol-test",
    );
    let mut answers: BTreeMap<String, String> = BTreeMap::new();
    for (tool, required) in TOOLS {
        // An argument no tool has.
        let unknown = refused(&mcp.call(tool, json!({"bogus": 1})));
        assert!(
            unknown.starts_with(&format!("bad arguments for {tool}: ")),
            "{unknown}"
        );
        if required.is_empty() {
            assert!(unknown.contains("unknown field `bogus`"), "{unknown}");
        } else {
            // Whichever it meets first: the unknown field, or a missing one.
            assert!(
                unknown.contains("unknown field `bogus`") || unknown.contains("missing field"),
                "{unknown}"
            );
            // A required argument of the wrong type.
            let wrong = refused(&mcp.call(tool, json!({required[0]: {"not": "this"}})));
            assert!(wrong.contains("invalid type"), "{tool}: {wrong}");
        }
        answers.insert((*tool).to_owned(), unknown);
    }
    // A tool that does not exist is a tool error too, listing the tools.
    let missing = refused(&mcp.call("launch", json!({})));
    assert!(
        missing.contains("no such tool; the tools are start, wait"),
        "{missing}"
    );
    // The server is still there and answers.
    mcp.ok("status", json!({}));
}

#[test]
fn input_the_engine_refuses_gets_the_command_lines_message_and_hint() {
    let world = world();
    let mut mcp = Mcp::start(&world, &["--as", "alice"], &[], "protocol-test");
    for (tool, args, cli) in [
        (
            "start",
            json!({"slug": "../up", "brief": "hi"}),
            vec!["start", "../up", "--message", "hi", "--as", "alice"],
        ),
        (
            "start",
            json!({"slug": "ok", "brief": ""}),
            vec!["start", "ok", "--message", "", "--as", "alice"],
        ),
        (
            "fix",
            json!({"slug": "nope", "brief": "hi"}),
            vec!["fix", "nope", "--message", "hi", "--as", "alice"],
        ),
        ("wait", json!({"slug": "nope"}), vec!["wait", "nope"]),
        (
            "rewind",
            json!({"slug": "nope", "to": 1}),
            vec!["rewind", "nope", "--to", "1", "--as", "alice"],
        ),
        (
            "ack",
            json!({"upto": 99}),
            vec!["ack", "99", "--as", "alice"],
        ),
        (
            "groups",
            json!({"key": "bad key"}),
            vec!["status", "--group-by", "bad key"],
        ),
    ] {
        let result = mcp.call(tool, args.clone());
        refused(&result);
        let run = world.ganger(&cli);
        run.expect_code(2);
        assert_eq!(text(&result), run.stderr, "{tool} {args}");
    }
    // Arguments the server reads itself.
    let bad_label = refused(&mcp.call("status", json!({"label": "team"})));
    assert_eq!(bad_label, "label \"team\": expected KEY=VALUE");
    let bad_mode = refused(&mcp.call("merge", json!({"slug": "x", "mode": "octopus"})));
    assert_eq!(
        bad_mode,
        "merge mode \"octopus\": expected merge, squash or rebase"
    );
}

#[test]
fn a_call_that_blocks_holds_up_none_of_the_others() {
    let world = world();
    let mut mcp = Mcp::start(&world, &["--as", "alice"], &[], "protocol-test");
    let began = Instant::now();
    let watch = mcp.send_call("watch", json!({"timeout_seconds": 3}));
    let status = mcp.send_call("status", json!({}));
    let listed = mcp.answer(status);
    let quick = began.elapsed();
    assert_eq!(listed["isError"], false);
    assert!(quick < Duration::from_secs(2), "status took {quick:?}");
    let watched = mcp.answer(watch);
    assert!(began.elapsed() >= Duration::from_secs(3));
    assert_eq!(text(&watched), "nothing new for alice (cursor 0)\n");
}

#[test]
fn a_line_that_is_not_json_is_answered_with_a_parse_error_and_the_session_goes_on() {
    let world = world();
    let mut mcp = Mcp::start(&world, &["--as", "alice"], &[], "protocol-test");
    mcp.write_line("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ");
    let answer = mcp.notification(Duration::from_secs(20), |m| m.get("error").is_some());
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    // Resources that are not ganger's are refused; the server answers on.
    for uri in ["file:///etc/passwd", "ganger://tasks/../up"] {
        let refused = mcp.request("resources/subscribe", json!({"uri": uri}));
        assert!(refused["error"]["code"].is_i64(), "{uri}: {refused}");
    }
    let taken = mcp.request("resources/subscribe", json!({"uri": "ganger://journal"}));
    assert!(taken.get("result").is_some(), "{taken}");
    mcp.ok("status", json!({}));
}
