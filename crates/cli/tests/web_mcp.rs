//! The MCP server over Streamable HTTP at `/mcp` on `ganger serve` (issue 16, with issue 17's
//! server): the same tools as `ganger mcp` on stdio, behind the API's tokens, each call acting
//! as the commander its token names. Plain HTTP here (ureq), so the test sees the protocol as
//! it goes over the wire: `initialize` opens a session (`Mcp-Session-Id`), answers come as
//! server-sent events.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_test_support::World;
use serde_json::{Value, json};
use std::time::Duration;
use web_world::{ALICE, BOB, Served, VERA, write_tokens};

/// A world with a quick command agent, and tokens for alice and bob (write) and vera (read).
fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo hi > file.txt; echo 'DONE: wrote'",
        "",
        "",
    );
    write_tokens(&world);
    world
}

/// An answer from `/mcp`: its status, session header and the JSON-RPC message it carried.
struct Answer {
    status: u16,
    session: Option<String>,
    body: String,
}

impl Answer {
    /// The JSON-RPC message: the body itself, or the `data:` line of an event stream that
    /// holds a response.
    fn message(&self) -> Value {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return value;
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC response in: {}", self.body))
    }
}

/// POSTs one JSON-RPC message to `/mcp`.
fn post(served: &Served, token: Option<&str>, session: Option<&str>, message: &Value) -> Answer {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut request = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}/mcp", served.base))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-06-18");
    }
    let response = agent
        .run(request.body(serde_json::to_vec(message).unwrap()).unwrap())
        .unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.into_body().read_to_string().unwrap();
    Answer {
        status,
        session,
        body,
    }
}

/// `initialize` and `notifications/initialized` as `token`'s holder; the session's id.
fn open_session(served: &Served, token: &str) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "remote-supervisor", "version": "1.0"}
        }
    });
    let answer = post(served, Some(token), None, &initialize);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let message = answer.message();
    assert_eq!(
        message["result"]["serverInfo"]["name"]
            .as_str()
            .map(|n| n.contains("ganger")),
        Some(true),
        "{message:#}"
    );
    let session = answer.session.expect("initialize gives a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(served, Some(token), Some(&session), &initialized);
    assert!(answer.status < 300, "{} {}", answer.status, answer.body);
    session
}

/// Calls tool `name` with `arguments` in `session`; the `result` of the call.
fn call(
    served: &Served,
    token: &str,
    session: &str,
    id: u64,
    name: &str,
    arguments: Value,
) -> Value {
    let message = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}
    });
    let answer = post(served, Some(token), Some(session), &message);
    assert_eq!(answer.status, 200, "{}", answer.body);
    let message = answer.message();
    message
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("tools/call {name} answered no result: {message:#}"))
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn mcp_over_http_needs_a_write_token_and_acts_as_its_commander() {
    let served = Served::start(world());
    let hello = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "x", "version": "1"}}
    });
    // No token, an unknown one, a read-only one: refused before the protocol starts.
    let none = post(&served, None, None, &hello);
    assert_eq!(none.status, 401, "{}", none.body);
    let unknown = post(
        &served,
        Some("not-a-token-of-this-server-at-all"),
        None,
        &hello,
    );
    assert_eq!(unknown.status, 401, "{}", unknown.body);
    let read_only = post(&served, Some(VERA), None, &hello);
    assert_eq!(read_only.status, 403, "{}", read_only.body);
    assert!(
        read_only.body.contains("read-only token"),
        "{}",
        read_only.body
    );

    // Alice's session: every tool of `ganger mcp` is there.
    let alice = open_session(&served, ALICE);
    let listed = post(
        &served,
        Some(ALICE),
        Some(&alice),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .message();
    let mut names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    // The same list as on stdio.
    let mut expected = ganger_mcp::tool_names();
    expected.sort_unstable();
    names.sort_unstable();
    assert_eq!(names, expected);

    // Alice starts a task through the tool: she owns it, as the HTTP API's reads show.
    let started = call(
        &served,
        ALICE,
        &alice,
        3,
        "start",
        json!({"slug": "remote", "brief": "write the file"}),
    );
    assert_ne!(started["isError"], json!(true), "{started:#}");
    let waited = call(
        &served,
        ALICE,
        &alice,
        4,
        "wait",
        json!({"slug": "remote", "timeout_seconds": 60}),
    );
    assert_ne!(waited["isError"], json!(true), "{waited:#}");
    let task = served.get("/api/tasks/remote").json();
    assert_eq!(task["task"]["owner"], "alice", "{task:#}");
    assert_eq!(task["task"]["status"], "done", "{task:#}");

    // Bob, in a session of his own, may not send alice's task a round: a tool error with
    // the CLI's message, naming her; the task keeps its one round.
    let bob = open_session(&served, BOB);
    let refused = call(
        &served,
        BOB,
        &bob,
        5,
        "fix",
        json!({"slug": "remote", "brief": "again"}),
    );
    assert_eq!(refused["isError"], json!(true), "{refused:#}");
    let said = text_of(&refused);
    assert!(
        said.contains("bob may not send rounds to task remote: it is owned by alice"),
        "{said}"
    );
    let rounds = served.get("/api/tasks/remote/rounds").json();
    assert_eq!(
        rounds["rounds"].as_array().map(Vec::len),
        Some(1),
        "{rounds:#}"
    );
}

/// `DELETE /mcp`: ends `session`; the status.
fn end_session(served: &Served, token: &str, session: &str) -> u16 {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let request = ureq::http::Request::builder()
        .method("DELETE")
        .uri(format!("{}/mcp", served.base))
        .header("Authorization", format!("Bearer {token}"))
        .header("Mcp-Session-Id", session)
        .header("MCP-Protocol-Version", "2025-06-18")
        .body(())
        .unwrap();
    agent.run(request).unwrap().status().as_u16()
}

/// How many read calls serve makes a second, over `window`.
fn reads_per_second(served: &Served, window: Duration) -> f64 {
    let before = web_world::read_calls(served.pid());
    std::thread::sleep(window);
    let after = web_world::read_calls(served.pid());
    (after - before) as f64 / window.as_secs_f64()
}

#[test]
fn only_ganger_resources_are_subscribed() {
    let served = Served::start(world());
    let alice = open_session(&served, ALICE);
    let subscribe = |session: &str, id: u64, uri: &str| {
        post(
            &served,
            Some(ALICE),
            Some(session),
            &json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
                    "params": {"uri": uri}}),
        )
        .message()
    };
    // Not ganger's, or a name no task can have: refused.
    for (id, uri) in [
        (2, "file:///etc/passwd"),
        (3, "https://example.com/"),
        (4, "ganger://tasks/../../etc/passwd"),
        (5, "ganger://elsewhere"),
    ] {
        let answer = subscribe(&alice, id, uri);
        assert!(
            answer["error"]["code"].is_i64(),
            "{uri} was taken: {answer}"
        );
    }
    let taken = subscribe(&alice, 6, "ganger://tasks");
    assert!(taken.get("result").is_some(), "{taken}");
}

#[test]
fn subscriptions_end_with_their_session() {
    let served = Served::start(world());
    let subscribe = |session: &str, id: u64, uri: &str| {
        post(
            &served,
            Some(ALICE),
            Some(session),
            &json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe",
                    "params": {"uri": uri}}),
        )
        .message()
    };
    // Sessions that subscribe and end: what they watched is no longer read.
    std::thread::sleep(Duration::from_secs(1));
    let idle = reads_per_second(&served, Duration::from_secs(3));
    for _ in 0..40 {
        let session = open_session(&served, ALICE);
        for (id, uri) in [(2, "ganger://tasks"), (3, "ganger://journal")] {
            let answer = subscribe(&session, id, uri);
            assert!(answer.get("result").is_some(), "{answer}");
        }
        let status = end_session(&served, ALICE, &session);
        assert!(status < 300, "DELETE /mcp: {status}");
    }
    std::thread::sleep(Duration::from_secs(1));
    let after = reads_per_second(&served, Duration::from_secs(3));
    assert!(
        after < idle * 2.0 + 500.0,
        "80 subscriptions of 40 ended sessions: serve reads {after:.0} times a second, {idle:.0} before"
    );
}

#[test]
fn a_body_that_is_not_json_is_a_json_rpc_parse_error() {
    let served = Served::start(world());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into();
    let request = ureq::http::Request::builder()
        .method("POST")
        .uri(format!("{}/mcp", served.base))
        .header("Authorization", format!("Bearer {ALICE}"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".to_vec())
        .unwrap();
    let response = agent.run(request).unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().read_to_string().unwrap();
    assert_eq!(status, 400, "{body}");
    let message: Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    assert_eq!(message["error"]["code"], -32700, "{message}");
    assert_eq!(message["id"], Value::Null, "{message}");
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
}
