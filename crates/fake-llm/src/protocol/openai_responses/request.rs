//! Reading a Responses request body into the neutral [`Conversation`].
//!
//! `instructions` and developer/system messages become system messages, and so do user
//! messages that only carry context (see [`super::context_message`]). `function_call` and
//! `custom_tool_call` items become assistant tool calls (joined to the assistant message just
//! before them, as chat completions carries text and calls in one message), their
//! `*_output` items become tool results. Reasoning and other items the script engine has no
//! use for are left out; the recording keeps the whole body anyway.

use serde_json::Value;

use super::context_message::is_context_only;
use crate::conversation::{Conversation, Message, Role};
use crate::protocol::request_body;

/// Parses a Responses request body.
pub(super) fn parse(body: &Value) -> Result<Conversation, String> {
    let mut messages = Vec::new();
    if let Some(instructions) = body.get("instructions").and_then(Value::as_str) {
        messages.push(message(Role::System, instructions.to_owned()));
    }
    match body.get("input") {
        Some(Value::String(prompt)) => messages.push(message(Role::User, prompt.clone())),
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                add_item(&mut messages, item).map_err(|e| format!("input[{index}]: {e}"))?;
            }
        }
        _ => return Err("the body has no `input` (a string or an array of items)".to_owned()),
    }
    Ok(request_body::conversation(body, messages, tool_name))
}

/// Adds what one input item means to `messages`.
fn add_item(messages: &mut Vec<Message>, item: &Value) -> Result<(), String> {
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    match kind {
        "message" => messages.push(parse_message(item)?),
        "function_call" | "custom_tool_call" => {
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a {kind} item without `name`"))?;
            // A tool of a namespace (Codex's MCP tools) by the name a script calls it.
            match item.get("namespace").and_then(Value::as_str) {
                Some(namespace) => add_call(messages, &format!("{namespace}__{name}")),
                None => add_call(messages, name),
            }
        }
        "function_call_output" | "custom_tool_call_output" => {
            messages.push(message(Role::Tool, output_text(item.get("output"))));
        }
        _ => {}
    }
    Ok(())
}

fn parse_message(item: &Value) -> Result<Message, String> {
    let parts = request_body::text_parts(item.get("content"));
    let role = match item.get("role").and_then(Value::as_str) {
        Some("system" | "developer") => Role::System,
        Some("user") if is_context_only(parts.iter().copied()) => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some(other) => return Err(format!("unknown role {other:?}")),
        None => return Err("a message without `role`".to_owned()),
    };
    Ok(message(role, parts.join("\n")))
}

/// Files a tool call under the assistant message just before it, or a new one.
fn add_call(messages: &mut Vec<Message>, name: &str) {
    match messages.last_mut() {
        Some(last) if last.role == Role::Assistant => last.tool_calls.push(name.to_owned()),
        _ => {
            let mut call = message(Role::Assistant, String::new());
            call.tool_calls.push(name.to_owned());
            messages.push(call);
        }
    }
}

fn message(role: Role, text: String) -> Message {
    Message {
        role,
        text,
        tool_calls: Vec::new(),
    }
}

/// A tool's output: a string, or the text of its content parts joined by newlines.
fn output_text(output: Option<&Value>) -> String {
    request_body::text_parts(output).join("\n")
}

/// The name of one entry of `tools`: `name` for function and custom tools, otherwise the
/// type of a built-in tool (`web_search`).
fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("name")
        .or_else(|| tool.get("type"))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(role: Role, text: &str, calls: &[&str]) -> Message {
        Message {
            role,
            text: text.to_owned(),
            tool_calls: calls.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    #[test]
    fn reads_codex_history_with_both_call_kinds() {
        let body = json!({
            "model": "gpt-5.5",
            "instructions": "You are Codex.",
            "stream": true,
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox rules"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "create a.txt"}]},
                {"type": "reasoning", "summary": [], "encrypted_content": "x"},
                {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
                {"type": "custom_tool_call_output", "call_id": "c1", "output": "Success."},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
                {"role": "user", "content": "now list"},
                {"type": "function_call", "call_id": "c2", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "a.txt"}]}
            ],
            "tools": [
                {"type": "function", "name": "exec_command", "parameters": {}},
                {"type": "custom", "name": "apply_patch", "format": {}},
                {"type": "web_search"}
            ]
        });
        let conversation = parse(&body).unwrap();
        assert_eq!(
            conversation.messages,
            vec![
                msg(Role::System, "You are Codex.", &[]),
                msg(Role::System, "sandbox rules", &[]),
                msg(
                    Role::System,
                    "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
                    &[]
                ),
                msg(Role::User, "create a.txt", &[]),
                msg(Role::Assistant, "", &["apply_patch"]),
                msg(Role::Tool, "Success.", &[]),
                msg(Role::Assistant, "Done.", &[]),
                msg(Role::User, "now list", &[]),
                msg(Role::Assistant, "", &["exec_command"]),
                msg(Role::Tool, "a.txt", &[]),
            ]
        );
        assert_eq!(
            conversation.tools,
            ["exec_command", "apply_patch", "web_search"]
        );
        assert_eq!(conversation.prompts(), ["create a.txt", "now list"]);
        assert_eq!(conversation.new_prompt(), None);
        assert!(conversation.stream);
    }

    #[test]
    fn a_string_input_is_one_prompt_and_a_missing_input_is_an_error() {
        let conversation = parse(&json!({"model": "m", "input": "hi"})).unwrap();
        assert_eq!(conversation.new_prompt(), Some("hi"));
        assert!(!conversation.stream);
        assert_eq!(
            parse(&json!({"messages": []})),
            Err("the body has no `input` (a string or an array of items)".to_owned())
        );
        assert_eq!(
            parse(&json!({"input": [{"type": "message", "role": "robot", "content": "x"}]})),
            Err("input[0]: unknown role \"robot\"".to_owned())
        );
    }
}
