//! The Gemini protocol as Gemini CLI speaks it: streamed and unary answers, function calls and
//! responses, JSON side requests, and every fault in Google's shapes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use ganger_fake_llm::{AnsweredBy, FakeLlm, Fault, Reply, Role, Script, TokenUsage};
use serde_json::{Value, json};

use crate::http_client::{HttpReply, agent, sse_data};

const STREAM_PATH: &str = "/v1beta/models/gemini-fake:streamGenerateContent?alt=sse";
const UNARY_PATH: &str = "/v1beta/models/gemini-fake:generateContent";

/// POSTs `body` to `path` (query included) the way Gemini CLI does, with `x-goog-api-key`.
fn post(llm: &FakeLlm, path: &str, body: &Value) -> HttpReply {
    let mut response = agent(Duration::from_secs(10))
        .post(format!("http://{}{path}", llm.addr()))
        .header("x-goog-api-key", "dummy")
        .send_json(body)
        .unwrap();
    HttpReply {
        status: response.status().as_u16(),
        content_type: response
            .headers()
            .get("content-type")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default(),
        headers: Vec::new(),
        body: response.body_mut().read_to_string().unwrap(),
    }
}

/// A request body with `contents`, a system instruction and, if any, function declarations.
fn request(contents: Vec<Value>, tools: &[&str]) -> Value {
    let mut body = json!({
        "contents": contents,
        "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
        "generationConfig": {"temperature": 1},
    });
    if !tools.is_empty() {
        let declarations: Vec<Value> = tools
            .iter()
            .map(|name| json!({"name": name, "parametersJsonSchema": {"type": "object"}}))
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    body
}

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

const TOOLS: [&str; 2] = ["write_file", "run_shell_command"];

/// The events of a stream, parsed.
fn events(reply: &HttpReply) -> Vec<Value> {
    sse_data(&reply.body)
        .iter()
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn streamed_text(events: &[Value]) -> String {
    events
        .iter()
        .filter_map(|event| event["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect()
}

fn recorded_usage(llm: &FakeLlm, index: usize) -> TokenUsage {
    match &llm.requests()[index].reply {
        Reply::Answer { usage, .. } => *usage,
        other => panic!("not an answer: {other:?}"),
    }
}

fn usage_metadata(usage: TokenUsage) -> Value {
    json!({
        "promptTokenCount": usage.input,
        "candidatesTokenCount": usage.output,
        "totalTokenCount": usage.input + usage.output,
    })
}

#[test]
fn a_streamed_text_comes_in_several_events_and_the_last_finishes_with_usage() {
    let llm = FakeLlm::start(Script::new().text("Hello from {{model}}")).unwrap();
    let reply = post(&llm, STREAM_PATH, &request(vec![user("say hello")], &TOOLS));
    assert_eq!(
        (reply.status, reply.content_type.as_str()),
        (200, "text/event-stream")
    );
    assert!(
        !reply.body.contains("event:") && !reply.body.contains("[DONE]"),
        "{}",
        reply.body
    );
    let events = events(&reply);
    assert_eq!(events.len(), 4, "{}", reply.body);
    assert_eq!(streamed_text(&events), "Hello from gemini-fake");
    for event in &events[..3] {
        assert_eq!(event["candidates"][0]["content"]["role"], "model");
        assert!(
            event["candidates"][0].get("finishReason").is_none(),
            "{event}"
        );
        assert!(event.get("usageMetadata").is_none(), "{event}");
    }
    let last = &events[3];
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["modelVersion"], "gemini-fake");
    assert_eq!(
        last["usageMetadata"],
        usage_metadata(recorded_usage(&llm, 0))
    );
    let recorded = &llm.requests()[0];
    assert_eq!(recorded.protocol.as_deref(), Some("gemini"));
    assert_eq!(recorded.query.as_deref(), Some("alt=sse"));
    let conversation = recorded.conversation.as_ref().unwrap();
    assert_eq!(
        (conversation.model.as_str(), conversation.stream),
        ("gemini-fake", true)
    );
    assert_eq!(conversation.tools, TOOLS);
}

#[test]
fn a_function_call_comes_whole_in_one_event() {
    let arguments = json!({"file_path": "hello.txt", "content": "hello\n"});
    let llm = FakeLlm::start(Script::new().tool("write_file", arguments.clone())).unwrap();
    let reply = post(&llm, STREAM_PATH, &request(vec![user("create it")], &TOOLS));
    let events = events(&reply);
    assert_eq!(
        events,
        vec![json!({
            "candidates": [{
                "content": {"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": arguments}}]},
                "finishReason": "STOP",
                "index": 0,
            }],
            "modelVersion": "gemini-fake",
            "responseId": "fake-0",
            "usageMetadata": usage_metadata(recorded_usage(&llm, 0)),
        })]
    );
}

#[test]
fn a_unary_request_gets_one_document() {
    let llm = FakeLlm::start(Script::new().text("whole answer")).unwrap();
    let reply = post(&llm, UNARY_PATH, &request(vec![user("go")], &TOOLS));
    assert_eq!(
        (reply.status, reply.content_type.as_str()),
        (200, "application/json")
    );
    assert_eq!(
        reply.json(),
        json!({
            "candidates": [{
                "content": {"role": "model", "parts": [{"text": "whole answer"}]},
                "finishReason": "STOP",
                "index": 0,
            }],
            "modelVersion": "gemini-fake",
            "responseId": "fake-0",
            "usageMetadata": usage_metadata(recorded_usage(&llm, 0)),
        })
    );
    let conversation = llm.requests()[0].conversation.clone().unwrap();
    assert!(!conversation.stream);
}

#[test]
fn a_function_response_continues_the_round_and_shows_in_the_history() {
    let llm = FakeLlm::start(
        Script::new()
            .tool("write_file", json!({"file_path": "a.txt", "content": "a"}))
            .text("Done. {{history}}"),
    )
    .unwrap();
    let prompt = json!({"role": "user", "parts": [{"text": "<session_context>\nsetup"}, {"text": "create a.txt"}]});
    post(&llm, STREAM_PATH, &request(vec![prompt.clone()], &TOOLS));
    let contents = vec![
        prompt,
        json!({"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "write_file", "args": {"file_path": "a.txt", "content": "a"}}}]}),
        json!({"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "write_file", "response": {"output": "Wrote a.txt"}}}]}),
    ];
    let reply = post(&llm, STREAM_PATH, &request(contents, &TOOLS));
    assert_eq!(
        streamed_text(&events(&reply)),
        "Done. history: 5 messages, 1 tool result, prompts: [<session_context> setup | create a.txt]"
    );
    let conversation = llm.requests()[1].conversation.clone().unwrap();
    let roles: Vec<Role> = conversation.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::User,
            Role::Assistant,
            Role::Tool
        ]
    );
    assert_eq!(conversation.messages[3].tool_calls, ["write_file"]);
    assert_eq!(conversation.messages[4].text, "Wrote a.txt");
    assert_eq!(llm.requests()[1].answered_by, AnsweredBy::Turn { index: 1 });
}

#[test]
fn a_side_request_asking_for_json_gets_json_fitting_its_schema_and_uses_no_turn() {
    let llm = FakeLlm::start(Script::new().text("the scripted turn")).unwrap();
    let mut check = request(vec![user("who speaks next?")], &[]);
    check["generationConfig"] = json!({
        "responseMimeType": "application/json",
        "responseJsonSchema": {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string"},
                "next_speaker": {"type": "string", "enum": ["model", "user"]},
            },
            "required": ["reasoning", "next_speaker"],
        },
    });
    let reply = post(&llm, UNARY_PATH, &check);
    let text = reply.json()["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"reasoning": "Scripted session title", "next_speaker": "user"})
    );
    let summary = post(&llm, UNARY_PATH, &request(vec![user("summarize")], &[]));
    assert_eq!(
        summary.json()["candidates"][0]["content"]["parts"][0]["text"],
        "Scripted session title"
    );
    let turn = post(&llm, STREAM_PATH, &request(vec![user("go")], &TOOLS));
    assert_eq!(streamed_text(&events(&turn)), "the scripted turn");
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
fn http_faults_and_bad_requests_get_google_error_bodies() {
    let cases = [
        (Fault::Http401, 401, "UNAUTHENTICATED"),
        (Fault::Http429, 429, "RESOURCE_EXHAUSTED"),
        (Fault::Http500, 500, "INTERNAL"),
    ];
    for (fault, status, name) in cases {
        let llm = FakeLlm::start(Script::new().fault(fault)).unwrap();
        let reply = post(&llm, STREAM_PATH, &request(vec![user("go")], &TOOLS));
        let message = format!("fake-llm: scripted fault {fault} (HTTP {status})");
        assert_eq!(
            (reply.status, reply.json()),
            (
                status,
                json!({"error": {"code": status, "message": message, "status": name}})
            )
        );
    }
    let llm = FakeLlm::start(Script::new()).unwrap();
    let bad = post(&llm, STREAM_PATH, &json!({"messages": []}));
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["status"], "INVALID_ARGUMENT");
    let unknown = post(&llm, "/v1beta/models/gemini-fake:countTokens", &json!({}));
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["status"], "NOT_FOUND");
    assert_eq!(unknown.json()["error"]["code"], 404);
}

/// Sends one request over a raw connection and returns what arrived before the server closed
/// it (the body still chunk-encoded).
fn raw_post(llm: &FakeLlm, path: &str, body: &Value) -> String {
    let addr = llm.addr();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut received = String::new();
    let _ = stream.read_to_string(&mut received);
    received
}

#[test]
fn a_cut_stream_stops_before_the_finishing_event() {
    let llm = FakeLlm::start(Script::new().fault_times(Fault::Cut, 1).text("whole")).unwrap();
    let received = raw_post(&llm, STREAM_PATH, &request(vec![user("go")], &TOOLS));
    assert!(received.starts_with("HTTP/1.1 200 OK"), "{received}");
    assert_eq!(received.matches("data: ").count(), 2, "{received}");
    assert!(!received.contains("finishReason"), "{received}");
    assert!(
        !received.ends_with("0\r\n\r\n"),
        "not terminated: {received:?}"
    );
    let reply = post(&llm, STREAM_PATH, &request(vec![user("go")], &TOOLS));
    assert_eq!(streamed_text(&events(&reply)), "whole");
}

#[test]
fn garbage_and_hang_work_on_gemini_paths() {
    let llm = FakeLlm::start(
        Script::new()
            .fault_times(Fault::Garbage, 1)
            .fault(Fault::Hang),
    )
    .unwrap();
    let garbage = post(&llm, STREAM_PATH, &request(vec![user("go")], &TOOLS));
    assert_eq!(
        (garbage.status, garbage.content_type.as_str()),
        (200, "text/event-stream")
    );
    assert!(
        sse_data(&garbage.body)
            .iter()
            .all(|data| serde_json::from_str::<Value>(data).is_err()),
        "{}",
        garbage.body
    );
    let hung = agent(Duration::from_millis(300))
        .post(format!("http://{}{STREAM_PATH}", llm.addr()))
        .send_json(request(vec![user("go")], &TOOLS));
    assert!(hung.is_err(), "a hang must not be answered");
    let recorded = llm.wait_for_requests(2, Duration::from_secs(5)).unwrap();
    assert_eq!(recorded[1].reply, Reply::Fault { fault: Fault::Hang });
}
