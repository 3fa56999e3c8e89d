//! The OpenAI Responses protocol (`/v1/responses`), in the shape Codex CLI sends and reads:
//! named events, function and custom tool calls, Codex's history items, faults.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use ganger_fake_llm::{AnsweredBy, FakeLlm, Fault, Role, Script, Turn};
use serde_json::{Value, json};

use crate::http_client::{HttpReply, try_post};

const PATCH: &str = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n";

/// A Codex-like request: developer instructions, the environment as a user message, then
/// `items`; `exec_command` offered as a function, `apply_patch` as a custom tool.
fn codex_request(items: &[Value], stream: bool) -> Value {
    let mut input = vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>\nworkspace-write\n</permissions instructions>"}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/w</cwd>\n  <shell>bash</shell>\n</environment_context>"}]}),
    ];
    input.extend_from_slice(items);
    json!({
        "model": "gpt-5.5",
        "instructions": "You are a coding agent.",
        "input": input,
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {"type": "object"}, "strict": false},
            {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
            {"type": "web_search"},
        ],
        "tool_choice": "auto",
        "stream": stream,
        "store": false,
    })
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn post(llm: &FakeLlm, body: &Value) -> HttpReply {
    try_post(llm, "/responses", body, Duration::from_secs(10)).unwrap()
}

/// The events of a stream as (event name, data parsed), checking that each `event:` line
/// names the `type` in its data and that sequence numbers count from 0.
fn events(reply: &HttpReply) -> Vec<(String, Value)> {
    assert_eq!(reply.content_type, "text/event-stream");
    let events: Vec<(String, Value)> = reply
        .body
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let (name, data) = event.split_once('\n').unwrap();
            let name = name.strip_prefix("event: ").unwrap().to_owned();
            let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(data["type"], name.as_str());
            (name, data)
        })
        .collect();
    for (sequence, (_, data)) in events.iter().enumerate() {
        assert_eq!(data["sequence_number"], sequence);
    }
    events
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}

fn last_data(events: &[(String, Value)], name: &str) -> Value {
    events
        .iter()
        .rev()
        .find(|(event, _)| event == name)
        .map(|(_, data)| data.clone())
        .unwrap()
}

#[test]
fn a_streamed_text_answer_has_the_responses_event_sequence_and_usage() {
    let llm = FakeLlm::start(Script::new().text("Hello, world")).unwrap();
    let reply = post(&llm, &codex_request(&[user("say hello")], true));
    assert_eq!(reply.status, 200);
    let events = events(&reply);
    assert_eq!(
        names(&events),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let deltas: String = events
        .iter()
        .filter(|(name, _)| name == "response.output_text.delta")
        .map(|(_, data)| data["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "Hello, world");
    assert_eq!(events[0].1["response"]["status"], "in_progress");
    assert_eq!(events[2].1["item"]["type"], "message");
    assert_eq!(events[4].1["item_id"], "msg_fake_0");
    let done = last_data(&events, "response.output_item.done");
    assert_eq!(
        done["item"],
        json!({"id": "msg_fake_0", "type": "message", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": "Hello, world", "annotations": []}]})
    );
    let completed = last_data(&events, "response.completed")["response"].clone();
    assert_eq!(completed["id"], "resp_fake_0");
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"], json!([done["item"]]));
    let usage = llm.requests()[0].reply.clone();
    let ganger_fake_llm::Reply::Answer { usage, .. } = usage else {
        panic!("not an answer: {usage:?}");
    };
    assert_eq!(
        completed["usage"],
        json!({
            "input_tokens": usage.input,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input + usage.output,
        })
    );
    assert_eq!(
        llm.requests()[0].protocol.as_deref(),
        Some("openai-responses")
    );
}

#[test]
fn a_function_tool_is_called_with_json_arguments() {
    let arguments = json!({"cmd": "ls -la", "workdir": "/w"});
    let llm = FakeLlm::start(Script::new().tool("exec_command", arguments.clone())).unwrap();
    let events = events(&post(&llm, &codex_request(&[user("list files")], true)));
    assert_eq!(
        names(&events)[2..],
        [
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(
        events[2].1["item"],
        json!({"id": "fc_fake_0", "type": "function_call", "status": "in_progress",
               "call_id": "call_fake_0", "name": "exec_command", "arguments": ""})
    );
    let joined: String = events[3..5]
        .iter()
        .map(|(_, data)| data["delta"].as_str().unwrap())
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
    assert_eq!(events[5].1["arguments"], joined.as_str());
    let item = &last_data(&events, "response.output_item.done")["item"];
    assert_eq!(item["status"], "completed");
    assert_eq!(item["arguments"], joined.as_str());
}

#[test]
fn a_custom_tool_gets_the_scripts_string_as_raw_input() {
    let script = Script::from_toml_str(
        "[[turns]]\ntool = \"apply_patch\"\narguments = \"*** Begin Patch\\n*** Add File: hello.txt\\n+hello\\n*** End Patch\\n\"\n",
    )
    .unwrap();
    let llm = FakeLlm::start(script).unwrap();
    let events = events(&post(
        &llm,
        &codex_request(&[user("create hello.txt")], true),
    ));
    assert_eq!(
        names(&events)[2..],
        [
            "response.output_item.added",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let joined: String = events[3..5]
        .iter()
        .map(|(_, data)| data["delta"].as_str().unwrap())
        .collect();
    assert_eq!(joined, PATCH);
    assert_eq!(events[5].1["input"], PATCH);
    assert_eq!(
        last_data(&events, "response.output_item.done")["item"],
        json!({"id": "ctc_fake_0", "type": "custom_tool_call", "status": "completed",
               "call_id": "call_fake_0", "name": "apply_patch", "input": PATCH})
    );
}

#[test]
fn without_stream_the_answer_is_one_response_document() {
    let llm = FakeLlm::start(Script::new().tool("apply_patch", json!(PATCH))).unwrap();
    let reply = post(&llm, &codex_request(&[user("create hello.txt")], false));
    assert_eq!(reply.content_type, "application/json");
    let document = reply.json();
    assert_eq!(document["object"], "response");
    assert_eq!(document["status"], "completed");
    assert_eq!(
        document["output"],
        json!([{"id": "ctc_fake_0", "type": "custom_tool_call", "status": "completed",
                "call_id": "call_fake_0", "name": "apply_patch", "input": PATCH}])
    );
    assert!(document["usage"]["total_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn codex_history_with_both_call_kinds_is_read_and_context_is_not_a_prompt() {
    let llm = FakeLlm::start(
        Script::new()
            .turn(Turn::tool("apply_patch", json!(PATCH)).when("create"))
            .text("Done round 1.")
            .turn(Turn::tool("exec_command", json!({"cmd": "cat hello.txt"})).when("show"))
            .text("Done round 2. {{history}}"),
    )
    .unwrap();
    let round1 = [user("create hello.txt")];
    post(&llm, &codex_request(&round1, true));
    let mut history = round1.to_vec();
    history.extend([
        json!({"type": "reasoning", "summary": [], "encrypted_content": "opaque"}),
        json!({"type": "custom_tool_call", "call_id": "call_fake_0", "name": "apply_patch", "input": PATCH}),
        json!({"type": "custom_tool_call_output", "call_id": "call_fake_0", "output": "Success. Updated: A hello.txt"}),
    ]);
    post(&llm, &codex_request(&history, true));
    history.extend([
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done round 1."}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}),
        user("show it"),
    ]);
    post(&llm, &codex_request(&history, true));
    history.extend([
        json!({"type": "function_call", "call_id": "call_fake_2", "name": "exec_command", "arguments": "{\"cmd\":\"cat hello.txt\"}"}),
        json!({"type": "function_call_output", "call_id": "call_fake_2", "output": "hello\n"}),
    ]);
    let last = events(&post(&llm, &codex_request(&history, true)));
    let text = last_data(&last, "response.output_text.done")["text"].clone();
    assert_eq!(
        text,
        "Done round 2. history: 11 messages, 2 tool results, prompts: [create hello.txt | show it]"
    );
    let requests = llm.requests();
    let answered: Vec<AnsweredBy> = requests.iter().map(|r| r.answered_by.clone()).collect();
    assert_eq!(
        answered,
        (0..4)
            .map(|index| AnsweredBy::Turn { index })
            .collect::<Vec<_>>()
    );
    let conversation = requests[3].conversation.clone().unwrap();
    let roles: Vec<(Role, Vec<String>)> = conversation
        .messages
        .iter()
        .map(|message| (message.role, message.tool_calls.clone()))
        .collect();
    let calls = |name: &str| vec![name.to_owned()];
    assert_eq!(
        roles,
        [
            (Role::System, vec![]),
            (Role::System, vec![]),
            (Role::System, vec![]),
            (Role::User, vec![]),
            (Role::Assistant, calls("apply_patch")),
            (Role::Tool, vec![]),
            (Role::Assistant, vec![]),
            (Role::System, vec![]),
            (Role::User, vec![]),
            (Role::Assistant, calls("exec_command")),
            (Role::Tool, vec![]),
        ][..]
    );
    assert_eq!(conversation.messages.len(), 11);
    assert_eq!(
        conversation.tools,
        ["exec_command", "apply_patch", "web_search"]
    );
}

#[test]
fn http_faults_send_openai_error_bodies_with_retry_headers() {
    let llm = FakeLlm::start(
        Script::new()
            .turn(Turn::fault(Fault::Http429).times(1).retry_after_ms(1500))
            .turn(Turn::fault(Fault::Http401).times(1))
            .text("ok"),
    )
    .unwrap();
    let request = codex_request(&[user("go")], true);
    let limited = post(&llm, &request);
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after-ms"), Some("1500"));
    assert_eq!(limited.header("retry-after"), Some("2"));
    assert_eq!(limited.json()["error"]["code"], "rate_limit_exceeded");
    let refused = post(&llm, &request);
    assert_eq!(
        (refused.status, refused.json()),
        (
            401,
            json!({"error": {"message": "fake-llm: scripted fault http-401 (HTTP 401)",
                             "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}})
        )
    );
    assert_eq!(post(&llm, &request).status, 200);
}

#[test]
fn a_cut_stream_sends_named_events_and_never_response_completed() {
    let llm = FakeLlm::start(Script::new().fault_times(Fault::Cut, 1).text("whole")).unwrap();
    let (head, body) = raw_post(llm.addr(), &codex_request(&[user("go")], true));
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(body.contains("event: response.created\ndata: "), "{body}");
    assert!(!body.contains("response.completed"), "{body}");
    assert!(!body.ends_with("0\r\n\r\n"), "not terminated: {body:?}");
    let events = events(&post(&llm, &codex_request(&[user("go")], true)));
    assert_eq!(
        last_data(&events, "response.output_text.done")["text"],
        "whole"
    );
}

#[test]
fn garbage_keeps_the_event_names_but_its_data_is_not_json() {
    let llm = FakeLlm::start(Script::new().fault(Fault::Garbage)).unwrap();
    let reply = post(&llm, &codex_request(&[user("go")], true));
    assert_eq!(reply.status, 200);
    let blocks: Vec<&str> = reply.body.split("\n\n").filter(|b| !b.is_empty()).collect();
    assert_eq!(blocks.len(), 2, "{}", reply.body);
    for block in blocks {
        let (name, data) = block.split_once('\n').unwrap();
        assert_eq!(name, "event: response.created");
        let data = data.strip_prefix("data: ").unwrap();
        assert!(serde_json::from_str::<Value>(data).is_err(), "{data}");
    }
}

#[test]
fn a_hang_is_recorded_and_never_answered() {
    let llm = FakeLlm::start(Script::new().fault_times(Fault::Hang, 1).text("after")).unwrap();
    let request = codex_request(&[user("go")], true);
    let hung = try_post(&llm, "/responses", &request, Duration::from_millis(300));
    assert!(hung.is_err(), "{hung:?}");
    assert_eq!(llm.requests().len(), 1);
    let events = events(&post(&llm, &request));
    assert_eq!(
        last_data(&events, "response.output_text.done")["text"],
        "after"
    );
}

#[test]
fn the_v1_less_path_is_served_and_a_body_without_input_is_a_400() {
    let llm = FakeLlm::start(Script::new().text("a")).unwrap();
    let root = llm.base_url().trim_end_matches("/v1").to_owned();
    let reply = crate::http_client::agent(Duration::from_secs(5))
        .post(format!("{root}/responses/"))
        .send_json(codex_request(&[user("x")], false))
        .unwrap();
    assert_eq!(reply.status(), 200);
    let bad = post(&llm, &json!({"model": "m", "messages": []}));
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.json()["error"]["message"],
        "fake-llm: cannot read this openai-responses request: the body has no `input` (a string or an array of items)"
    );
}

/// POSTs to `/v1/responses` over a plain socket and returns head and body as received, for
/// answers that a client library would refuse to read (cut streams).
fn raw_post(addr: std::net::SocketAddr, body: &Value) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST /v1/responses HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
        }
    }
    let text = String::from_utf8(received).unwrap();
    match text.split_once("\r\n\r\n") {
        Some((head, body)) => (head.to_owned(), body.to_owned()),
        None => (text, String::new()),
    }
}

#[test]
fn chat_completions_send_a_string_argument_as_the_arguments_text() {
    let llm = FakeLlm::start(Script::new().tool("apply_patch", json!(PATCH))).unwrap();
    let body = crate::http_client::chat(
        vec![crate::http_client::user("go")],
        &["apply_patch"],
        false,
    );
    let reply = crate::http_client::post_chat(&llm, &body);
    assert_eq!(
        reply.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        PATCH
    );
}
