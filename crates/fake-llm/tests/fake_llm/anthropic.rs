//! The Anthropic Messages protocol: named events and whole messages, Claude Code's request
//! shapes (system entries inside `messages`, reminders, tool results), side requests, faults
//! and the token count endpoint.

use std::io::Read;
use std::time::Duration;

use ganger_fake_llm::{Answer, AnsweredBy, FakeLlm, Fault, Reply, Role, Script, TokenUsage, Turn};
use serde_json::{Value, json};

use crate::http_client::{HttpReply, agent, try_post};

/// The tools a Claude Code request offers (a few of them), in Anthropic's shape.
const CLAUDE_TOOLS: [&str; 3] = ["Bash", "Edit", "Write"];

/// A Messages request body as Claude Code sends it (`system` blocks, `tools[].name`).
fn messages(messages: Vec<Value>, tools: &[&str], stream: bool) -> Value {
    let mut body = json!({
        "model": "claude-fake",
        "max_tokens": 32000,
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": messages,
        "tools": tools.iter().map(|name| json!({"name": name, "input_schema": {"type": "object"}})).collect::<Vec<_>>(),
        "metadata": {"user_id": "u"},
    });
    if stream {
        body["stream"] = json!(true);
    }
    body
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

fn tool_use(id: &str, name: &str, input: &Value) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
}

fn tool_result(id: &str, text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]})
}

/// POSTs to `/v1/messages?beta=true`, as Claude Code does.
fn post_messages(llm: &FakeLlm, body: &Value) -> HttpReply {
    try_post(llm, "/messages?beta=true", body, Duration::from_secs(10)).unwrap()
}

/// The events of a stream as (event name, data parsed as JSON).
fn named_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let (name, data) = event.split_once('\n').unwrap();
            let name = name.strip_prefix("event: ").unwrap().to_owned();
            let data = data.strip_prefix("data: ").unwrap();
            (name, serde_json::from_str(data).unwrap())
        })
        .collect()
}

fn usage(input: u64, output: u64) -> Value {
    json!({"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": output})
}

fn recorded_usage(llm: &FakeLlm, index: usize) -> TokenUsage {
    match &llm.requests()[index].reply {
        Reply::Answer { usage, .. } => *usage,
        other => panic!("request {index} got {other:?}"),
    }
}

#[test]
fn a_streamed_text_answer_is_the_api_s_sequence_of_named_events() {
    let llm = FakeLlm::start(Script::new().text("Hello, world")).unwrap();
    let reply = post_messages(
        &llm,
        &messages(vec![user("say hello")], &CLAUDE_TOOLS, true),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, "text/event-stream");
    let recorded = recorded_usage(&llm, 0);
    assert_eq!(
        recorded,
        TokenUsage {
            input: 8,
            output: 3
        }
    );
    let delta = |text: &str| json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}});
    let expected = vec![
        json!({"type": "message_start", "message": {
            "id": "msg_fake_0", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage(8, 1),
        }}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        delta("Hel"),
        delta("lo,"),
        delta(" wo"),
        delta("rld"),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ];
    let events = named_events(&reply.body);
    for (name, data) in &events {
        assert_eq!(Some(name.as_str()), data["type"].as_str());
    }
    let data: Vec<Value> = events.into_iter().map(|(_, data)| data).collect();
    assert_eq!(data, expected);
}

#[test]
fn a_streamed_tool_call_sends_its_input_as_json_pieces() {
    let input = json!({"file_path": "/repo/hello.txt", "content": "hello\n"});
    let llm = FakeLlm::start(Script::new().tool("Write", input.clone())).unwrap();
    let reply = post_messages(
        &llm,
        &messages(vec![user("create hello.txt")], &CLAUDE_TOOLS, true),
    );
    let events = named_events(&reply.body);
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(
        events[1].1["content_block"],
        json!({"type": "tool_use", "id": "call_fake_0", "name": "Write", "input": {}})
    );
    let joined: String = events[2..5]
        .iter()
        .map(|(_, data)| {
            assert_eq!(data["delta"]["type"], "input_json_delta");
            data["delta"]["partial_json"].as_str().unwrap()
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), input);
    let recorded = recorded_usage(&llm, 0);
    assert_eq!(
        events[0].1["message"]["usage"]["input_tokens"],
        recorded.input
    );
    assert_eq!(
        events[6].1,
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": recorded.output}})
    );
}

#[test]
fn without_stream_the_answer_is_one_message_document() {
    let llm = FakeLlm::start(
        Script::new()
            .tool("Bash", json!({"command": "ls"}))
            .text("Listed."),
    )
    .unwrap();
    let call = post_messages(&llm, &messages(vec![user("list")], &CLAUDE_TOOLS, false));
    assert_eq!(call.content_type, "application/json");
    assert_eq!(
        call.json(),
        json!({
            "id": "msg_fake_0", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [{"type": "tool_use", "id": "call_fake_0", "name": "Bash", "input": {"command": "ls"}}],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": usage(6, 5),
        })
    );
    let history = vec![
        user("list"),
        tool_use("call_fake_0", "Bash", &json!({"command": "ls"})),
        tool_result("call_fake_0", "a.txt"),
    ];
    let text = post_messages(&llm, &messages(history, &CLAUDE_TOOLS, false));
    assert_eq!(
        text.json(),
        json!({
            "id": "msg_fake_1", "type": "message", "role": "assistant", "model": "claude-fake",
            "content": [{"type": "text", "text": "Listed."}],
            "stop_reason": "end_turn", "stop_sequence": null, "usage": usage(8, 2),
        })
    );
}

#[test]
fn system_entries_inside_messages_and_reminders_do_not_hide_the_prompt() {
    let llm = FakeLlm::start(
        Script::new()
            .turn(Turn::text("wrong").when("CLAUDE"))
            .turn(Turn::text("Round 1. {{history}}").when("(?i)create")),
    )
    .unwrap();
    let body = messages(
        vec![
            json!({"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>\nCLAUDE.md: be careful\n</system-reminder>"},
                {"type": "text", "text": "Please create hello.txt"},
            ]}),
            json!({"role": "system", "content": "Available agent types: general-purpose"}),
        ],
        &CLAUDE_TOOLS,
        true,
    );
    let reply = post_messages(&llm, &body);
    let text: String = named_events(&reply.body)
        .iter()
        .filter_map(|(_, data)| data["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        text,
        "Round 1. history: 3 messages, 0 tool results, prompts: [Please create hello.txt]"
    );
    let recorded = &llm.requests()[0];
    assert_eq!(recorded.answered_by, AnsweredBy::Turn { index: 1 });
    assert_eq!(recorded.protocol.as_deref(), Some("anthropic-messages"));
    assert_eq!(recorded.query.as_deref(), Some("beta=true"));
    let roles: Vec<Role> = recorded
        .conversation
        .as_ref()
        .unwrap()
        .messages
        .iter()
        .map(|message| message.role)
        .collect();
    assert_eq!(roles, [Role::System, Role::User, Role::System]);
}

#[test]
fn a_tool_result_continues_the_round_instead_of_opening_a_prompt() {
    let llm = FakeLlm::start(
        Script::new()
            .turn(
                Turn::tool("Write", json!({"file_path": "/r/a.txt", "content": "a"}))
                    .when("create"),
            )
            .text("Done round 1. {{history}}")
            .turn(Turn::text("Round 2.").when("edit")),
    )
    .unwrap();
    let first = vec![user("create a.txt")];
    post_messages(&llm, &messages(first.clone(), &CLAUDE_TOOLS, false));
    let mut continued = first;
    continued.push(tool_use("call_fake_0", "Write", &json!({})));
    continued.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_fake_0", "content": [{"type": "text", "text": "File created"}]},
        {"type": "text", "text": "<system-reminder>todo list is empty</system-reminder>"},
    ]}));
    let reply = post_messages(&llm, &messages(continued.clone(), &CLAUDE_TOOLS, false));
    assert_eq!(
        reply.json()["content"][0]["text"],
        "Done round 1. history: 4 messages, 1 tool result, prompts: [create a.txt]"
    );
    // Continuing once more: the next turn waits for a prompt, so the answer says so.
    let waiting = post_messages(&llm, &messages(continued, &CLAUDE_TOOLS, false));
    let by: Vec<AnsweredBy> = llm.requests().into_iter().map(|r| r.answered_by).collect();
    assert_eq!(
        by,
        [
            AnsweredBy::Turn { index: 0 },
            AnsweredBy::Turn { index: 1 },
            AnsweredBy::WaitingForPrompt { index: 2 }
        ]
    );
    assert!(
        waiting.json()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("waits for a prompt matching \"edit\"")
    );
}

#[test]
fn side_requests_without_tools_get_the_default_and_use_up_no_turn() {
    let llm = FakeLlm::start(Script::new().text("the scripted turn")).unwrap();
    let empty_tools = messages(vec![user("Write a title")], &[], true);
    let mut no_tools_key = messages(vec![user("Write a title")], &[], false);
    no_tools_key.as_object_mut().unwrap().remove("tools");
    let titled = post_messages(&llm, &empty_tools);
    let titled_again = post_messages(&llm, &no_tools_key);
    let turn = post_messages(&llm, &messages(vec![user("go")], &CLAUDE_TOOLS, false));
    let text: String = named_events(&titled.body)
        .iter()
        .filter_map(|(_, data)| data["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "Scripted session title");
    assert_eq!(
        titled_again.json()["content"][0]["text"],
        "Scripted session title"
    );
    assert_eq!(turn.json()["content"][0]["text"], "the scripted turn");
    let by: Vec<AnsweredBy> = llm.requests().into_iter().map(|r| r.answered_by).collect();
    assert_eq!(
        by,
        [
            AnsweredBy::Default,
            AnsweredBy::Default,
            AnsweredBy::Turn { index: 0 }
        ]
    );
}

#[test]
fn http_faults_send_anthropic_error_bodies() {
    let cases = [
        (Fault::Http401, 401, "authentication_error"),
        (Fault::Http429, 429, "rate_limit_error"),
        (Fault::Http500, 500, "api_error"),
    ];
    for (fault, status, kind) in cases {
        let mut turn = Turn::fault(fault).times(1);
        if fault != Fault::Http401 {
            turn = turn.retry_after_ms(2500);
        }
        let llm = FakeLlm::start(Script::new().turn(turn).text("recovered")).unwrap();
        let request = messages(vec![user("go")], &CLAUDE_TOOLS, true);
        let reply = post_messages(&llm, &request);
        assert_eq!(reply.status, status);
        assert_eq!(reply.content_type, "application/json");
        assert_eq!(
            reply.json(),
            json!({"type": "error", "error": {"type": kind, "message": format!("fake-llm: scripted fault {fault} (HTTP {status})")}})
        );
        let retry_headers = (reply.header("retry-after-ms"), reply.header("retry-after"));
        if fault == Fault::Http401 {
            assert_eq!(retry_headers, (None, None));
        } else {
            assert_eq!(retry_headers, (Some("2500"), Some("3")));
        }
        assert_eq!(post_messages(&llm, &request).status, 200);
    }
}

#[test]
fn unreadable_requests_get_an_invalid_request_error() {
    let llm = FakeLlm::start(Script::new().text("unused")).unwrap();
    let reply = post_messages(&llm, &json!({"model": "m", "prompt": "hi"}));
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["type"], "error");
    assert_eq!(reply.json()["error"]["type"], "invalid_request_error");
    assert_eq!(llm.requests()[0].answered_by, AnsweredBy::BadRequest);
}

/// Reads a response until the server breaks the connection; returns the bytes received.
fn read_until_cut(llm: &FakeLlm, body: &Value) -> (u16, String) {
    let response = agent(Duration::from_secs(10))
        .post(format!("{}/messages", llm.base_url()))
        .send_json(body)
        .unwrap();
    let status = response.status().as_u16();
    let mut reader = response.into_body().into_reader();
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    while let Ok(read @ 1..) = reader.read(&mut buffer) {
        received.extend_from_slice(&buffer[..read]);
    }
    (status, String::from_utf8(received).unwrap())
}

#[test]
fn a_cut_stream_stops_before_the_content_block_ends() {
    let llm = FakeLlm::start(Script::new().fault_times(Fault::Cut, 1).text("whole")).unwrap();
    let (status, body) = read_until_cut(&llm, &messages(vec![user("go")], &CLAUDE_TOOLS, true));
    assert_eq!(status, 200);
    let names: Vec<String> = named_events(&body)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta"
        ]
    );
    let reply = post_messages(&llm, &messages(vec![user("go")], &CLAUDE_TOOLS, false));
    assert_eq!(reply.json()["content"][0]["text"], "whole");
}

#[test]
fn garbage_keeps_the_event_name_but_not_the_json() {
    let llm = FakeLlm::start(Script::new().fault(Fault::Garbage)).unwrap();
    let streamed = post_messages(&llm, &messages(vec![user("go")], &CLAUDE_TOOLS, true));
    assert_eq!(
        (streamed.status, streamed.content_type.as_str()),
        (200, "text/event-stream")
    );
    let events: Vec<(&str, &str)> = streamed
        .body
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| event.split_once('\n').unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{}", streamed.body);
    for (name, data) in events {
        assert_eq!(name, "event: message_start");
        let data = data.strip_prefix("data: ").unwrap();
        assert!(serde_json::from_str::<Value>(data).is_err(), "{data}");
    }
    let whole = post_messages(&llm, &messages(vec![user("go")], &CLAUDE_TOOLS, false));
    assert_eq!(whole.status, 200);
    assert!(serde_json::from_str::<Value>(&whole.body).is_err());
}

#[test]
fn count_tokens_estimates_the_input_and_uses_up_no_turn() {
    let llm = FakeLlm::start(Script::new().text("the turn")).unwrap();
    let body = messages(vec![user("count me, please")], &CLAUDE_TOOLS, false);
    let counted = try_post(
        &llm,
        "/messages/count_tokens?beta=true",
        &body,
        Duration::from_secs(5),
    )
    .unwrap();
    let answered = post_messages(&llm, &body);
    let input = recorded_usage(&llm, 1).input;
    assert_eq!(
        (counted.status, counted.json()),
        (200, json!({"input_tokens": input}))
    );
    assert_eq!(answered.json()["content"][0]["text"], "the turn");
    let first = &llm.requests()[0];
    assert_eq!(first.answered_by, AnsweredBy::NotAModelRequest);
    assert_eq!(
        first.reply,
        Reply::TokenCount {
            input_tokens: input
        }
    );
    let answer = Answer::Text {
        text: "the turn".to_owned(),
    };
    assert!(matches!(&llm.requests()[1].reply, Reply::Answer { answer: a, .. } if *a == answer));
}
