//! A plain HTTP client for the tests (ureq), and builders for chat completions bodies.

use std::time::Duration;

use ganger_fake_llm::FakeLlm;
use serde_json::{Value, json};

/// What came back from one request.
#[derive(Debug)]
pub struct HttpReply {
    pub status: u16,
    pub content_type: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// The `data:` payloads of an event stream, in order.
    pub fn sse_data(&self) -> Vec<String> {
        sse_data(&self.body)
    }

    /// The text of a streamed answer: its content deltas joined.
    pub fn streamed_text(&self) -> String {
        self.sse_chunks()
            .iter()
            .filter_map(|chunk| {
                chunk["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    }

    /// The `data:` payloads parsed as JSON (all but `[DONE]`), with `created` removed.
    pub fn sse_chunks(&self) -> Vec<Value> {
        self.sse_data()
            .iter()
            .filter(|data| *data != "[DONE]")
            .map(|data| without_created(serde_json::from_str(data).unwrap()))
            .collect()
    }
}

pub fn sse_data(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| event.strip_prefix("data: ").unwrap().to_owned())
        .collect()
}

pub fn without_created(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        assert!(object.remove("created").unwrap().is_u64());
    }
    value
}

pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// POSTs `body` to the chat completions endpoint with an API key.
pub fn post_chat(llm: &FakeLlm, body: &Value) -> HttpReply {
    try_post(llm, "/chat/completions", body, Duration::from_secs(10)).unwrap()
}

pub fn try_post(
    llm: &FakeLlm,
    path: &str,
    body: &Value,
    timeout: Duration,
) -> Result<HttpReply, ureq::Error> {
    let response = agent(timeout)
        .post(format!("{}{path}", llm.base_url()))
        .header("Authorization", "Bearer sk-test-key")
        .send_json(body)?;
    read(response)
}

pub fn get(url: &str) -> HttpReply {
    read(agent(Duration::from_secs(10)).get(url).call().unwrap()).unwrap()
}

fn read(mut response: ureq::http::Response<ureq::Body>) -> Result<HttpReply, ureq::Error> {
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap().to_owned()))
        .collect::<Vec<_>>();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.body_mut().read_to_string()?;
    Ok(HttpReply {
        status,
        content_type,
        headers,
        body,
    })
}

/// The tools an OpenCode request offers, in its shape.
pub const TOOLS: [&str; 3] = ["bash", "edit", "write"];

pub fn chat(messages: Vec<Value>, tools: &[&str], stream: bool) -> Value {
    let mut body = json!({
        "model": "scripted",
        "max_tokens": 8192,
        "messages": messages,
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !tools.is_empty() {
        body["tool_choice"] = json!("auto");
        body["tools"] = tools
            .iter()
            .map(|name| {
                json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
            })
            .collect();
    }
    body
}

pub fn system(text: &str) -> Value {
    json!({"role": "system", "content": text})
}

pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

pub fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

pub fn assistant_call(name: &str, call_id: &str, arguments: &Value) -> Value {
    json!({
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}],
    })
}

pub fn tool_result(call_id: &str, text: &str) -> Value {
    json!({"role": "tool", "tool_call_id": call_id, "content": text})
}
