//! The OpenAI chat completions protocol: streamed and whole answers, text and tool calls.

use ganger_fake_llm::{FakeLlm, Script};
use serde_json::{Value, json};

use crate::http_client::{chat, post_chat, system, user, without_created};

fn chunk(index: usize, delta: Value, finish: Value) -> Value {
    json!({
        "id": format!("chatcmpl-fake-{index}"),
        "object": "chat.completion.chunk",
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

#[test]
fn a_streamed_text_answer_comes_in_pieces_then_usage_then_done() {
    let llm = FakeLlm::start(Script::new().text("Hello, world")).unwrap();
    let reply = post_chat(
        &llm,
        &chat(
            vec![system("be brief"), user("say hello")],
            &["write"],
            true,
        ),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, "text/event-stream");
    assert_eq!(reply.sse_data().last().map(String::as_str), Some("[DONE]"));
    assert_eq!(
        reply.sse_chunks(),
        vec![
            chunk(0, json!({"role": "assistant"}), Value::Null),
            chunk(0, json!({"content": "Hel"}), Value::Null),
            chunk(0, json!({"content": "lo,"}), Value::Null),
            chunk(0, json!({"content": " wo"}), Value::Null),
            chunk(0, json!({"content": "rld"}), Value::Null),
            chunk(0, json!({}), json!("stop")),
            json!({
                "id": "chatcmpl-fake-0",
                "object": "chat.completion.chunk",
                "model": "scripted",
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
            }),
        ]
    );
}

#[test]
fn a_streamed_tool_call_sends_id_and_name_first_then_the_arguments_in_two_pieces() {
    let arguments = json!({"filePath": "hello.txt", "content": "hello\n"});
    let llm = FakeLlm::start(Script::new().tool("write", arguments.clone())).unwrap();
    let mut body = chat(vec![user("create hello.txt")], &["bash", "write"], true);
    body.as_object_mut().unwrap().remove("stream_options");
    let reply = post_chat(&llm, &body);
    let chunks = reply.sse_chunks();
    assert_eq!(
        chunks,
        vec![
            chunk(0, json!({"role": "assistant"}), Value::Null),
            chunk(
                0,
                json!({"tool_calls": [{"index": 0, "id": "call_fake_0", "type": "function", "function": {"name": "write", "arguments": ""}}]}),
                Value::Null
            ),
            chunk(
                0,
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"content\":\"hello\\n\",\""}}]}),
                Value::Null
            ),
            chunk(
                0,
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "filePath\":\"hello.txt\"}"}}]}),
                Value::Null
            ),
            chunk(0, json!({}), json!("tool_calls")),
        ],
        "no usage chunk without stream_options.include_usage"
    );
    let joined: String = chunks[2..4]
        .iter()
        .map(|chunk| {
            chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
}

#[test]
fn a_whole_text_answer_is_one_completion_document() {
    let llm = FakeLlm::start(Script::new().text("Done. {{history}}")).unwrap();
    let reply = post_chat(&llm, &chat(vec![user("go")], &["write"], false));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type, "application/json");
    assert_eq!(
        without_created(reply.json()),
        json!({
            "id": "chatcmpl-fake-0",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "Done. history: 1 message, 0 tool results, prompts: [go]"},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 1, "completion_tokens": 14, "total_tokens": 15},
        })
    );
}

#[test]
fn a_whole_tool_call_carries_its_arguments_as_a_json_string() {
    let llm = FakeLlm::start(Script::new().tool("bash", json!({"command": "ls"}))).unwrap();
    let reply = post_chat(&llm, &chat(vec![user("list")], &["bash"], false));
    assert_eq!(
        without_created(reply.json()),
        json!({
            "id": "chatcmpl-fake-0",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{"id": "call_fake_0", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}],
                },
                "finish_reason": "tool_calls",
            }],
            "usage": {"prompt_tokens": 1, "completion_tokens": 5, "total_tokens": 6},
        })
    );
}

#[test]
fn the_path_without_v1_and_with_a_trailing_slash_is_served_too() {
    let llm = FakeLlm::start(Script::new().text("a").text("b")).unwrap();
    let body = chat(vec![user("x")], &["write"], false);
    let root = llm.base_url().trim_end_matches("/v1").to_owned();
    for url in [
        format!("{root}/chat/completions"),
        format!("{root}/v1/chat/completions/"),
    ] {
        let reply = crate::http_client::agent(std::time::Duration::from_secs(5))
            .post(&url)
            .send_json(&body)
            .unwrap();
        assert_eq!(reply.status(), 200, "{url}");
    }
}
