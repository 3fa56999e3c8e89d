//! The `response` object: the whole answer when `stream` is false, and the parts the stream
//! shares (ids, output items, usage, the `response` carried by `response.created` and
//! `response.completed`).

use serde_json::{Value, json};

use crate::conversation::{Answer, arguments_text};
use crate::protocol::RenderContext;

/// How the request offered the answer's tool: as a function (JSON arguments) or as a custom
/// tool (raw text input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallKind {
    Function,
    Custom,
}

/// The kind of call for tool `name`: custom when the request's `tools` entry with that name
/// has `"type":"custom"`, a function otherwise (also for tools the request did not offer).
pub(super) fn call_kind(name: &str, context: RenderContext<'_>) -> CallKind {
    let offered_as_custom = context
        .body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|tool| tool.get("name").and_then(Value::as_str) == Some(name))
        .any(|tool| tool.get("type").and_then(Value::as_str) == Some("custom"));
    if offered_as_custom {
        CallKind::Custom
    } else {
        CallKind::Function
    }
}

/// A tool inside a `namespace` entry of the request's `tools` (how Codex offers an MCP
/// server's tools: the namespace `mcp__SERVER`, its tools by their own names) is called as
/// `NAMESPACE__TOOL` in a script, and answered as a function call of `TOOL` with the field
/// `namespace`: the namespace and the tool's own name.
fn namespaced<'a>(name: &'a str, context: RenderContext<'_>) -> Option<(&'a str, &'a str)> {
    context
        .body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|tool| tool.get("type").and_then(Value::as_str) == Some("namespace"))
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .find_map(|space| {
            let rest = name.strip_prefix(space)?.strip_prefix("__")?;
            Some((&name[..space.len()], rest))
        })
}

/// The id of the response.
pub(super) fn response_id(context: RenderContext<'_>) -> String {
    format!("resp_fake_{}", context.request_index)
}

/// The id of the answer's one output item (`msg_`, `fc_` or `ctc_` as OpenAI prefixes them).
pub(super) fn item_id(answer: &Answer, context: RenderContext<'_>) -> String {
    let prefix = match answer {
        Answer::Text { .. } => "msg",
        Answer::ToolCall { name, .. } => match call_kind(name, context) {
            CallKind::Function => "fc",
            CallKind::Custom => "ctc",
        },
    };
    format!("{prefix}_fake_{}", context.request_index)
}

/// The answer's output item; `done` gives the finished item, otherwise the empty one that
/// `response.output_item.added` announces.
pub(super) fn output_item(answer: &Answer, context: RenderContext<'_>, done: bool) -> Value {
    let id = item_id(answer, context);
    let status = if done { "completed" } else { "in_progress" };
    match answer {
        Answer::Text { text } => {
            let content = if done {
                json!([output_text_part(text)])
            } else {
                json!([])
            };
            json!({"id": id, "type": "message", "status": status, "role": "assistant", "content": content})
        }
        Answer::ToolCall {
            name,
            arguments,
            call_id,
        } => {
            let text = if done {
                arguments_text(arguments)
            } else {
                String::new()
            };
            match call_kind(name, context) {
                CallKind::Function => match namespaced(name, context) {
                    Some((namespace, tool)) => json!({
                        "id": id, "type": "function_call", "status": status,
                        "call_id": call_id, "namespace": namespace, "name": tool,
                        "arguments": text,
                    }),
                    None => json!({
                        "id": id, "type": "function_call", "status": status,
                        "call_id": call_id, "name": name, "arguments": text,
                    }),
                },
                CallKind::Custom => json!({
                    "id": id, "type": "custom_tool_call", "status": status,
                    "call_id": call_id, "name": name, "input": text,
                }),
            }
        }
    }
}

/// A text content part.
pub(super) fn output_text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

/// The `response` object with `status`: `in_progress` (no output, no usage yet) or
/// `completed` (the finished item and the usage).
pub(super) fn document(answer: &Answer, context: RenderContext<'_>, status: &str) -> Value {
    let completed = status == "completed";
    json!({
        "id": response_id(context),
        "object": "response",
        "created_at": context.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": context.conversation.model,
        "output": if completed { json!([output_item(answer, context, true)]) } else { json!([]) },
        "parallel_tool_calls": false,
        "store": context.body.get("store").cloned().unwrap_or(json!(false)),
        "usage": if completed { usage(context) } else { Value::Null },
    })
}

/// The answer's token counts in Responses' shape (nothing cached, no reasoning).
pub(super) fn usage(context: RenderContext<'_>) -> Value {
    let usage = context.usage;
    json!({
        "input_tokens": usage.input,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input + usage.output,
    })
}
