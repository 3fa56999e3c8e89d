//! Reading a chat completions request body into the neutral [`Conversation`].
//!
//! Lenient where agents differ (content as a string, an array of parts or null; roles
//! `developer` and `function`), strict where a missing field means the body is not a chat
//! request at all (no `messages` array).

use serde_json::Value;

use crate::conversation::{Conversation, Message, Role};

/// Parses a chat completions request body.
pub(super) fn parse(body: &Value) -> Result<Conversation, String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("the body has no `messages` array")?
        .iter()
        .enumerate()
        .map(|(index, message)| {
            parse_message(message).map_err(|e| format!("messages[{index}]: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(tool_name)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(Conversation {
        model: body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        messages,
        tools,
    })
}

fn parse_message(message: &Value) -> Result<Message, String> {
    let role = match message.get("role").and_then(Value::as_str) {
        Some("system" | "developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool" | "function") => Role::Tool,
        Some(other) => return Err(format!("unknown role {other:?}")),
        None => return Err("no `role`".to_owned()),
    };
    let tool_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|call| call.pointer("/function/name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(Message {
        role,
        text: content_text(message.get("content")),
        tool_calls,
    })
}

/// The text of a `content` field: a string, or the `text` of every text part joined by
/// newlines; images and other parts are left out.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The name of one entry of `tools` (`{"type":"function","function":{"name":…}}`).
fn tool_name(tool: &Value) -> Option<&str> {
    tool.pointer("/function/name")
        .or_else(|| tool.get("name"))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_roles_parts_tool_calls_and_tools() {
        let body = json!({
            "model": "scripted",
            "stream": true,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "create"}, {"type": "image_url"}, {"type": "text", "text": "hello.txt"}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "write", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "Wrote file successfully."}
            ],
            "tools": [{"type": "function", "function": {"name": "write", "parameters": {}}}, {"type": "function", "function": {"name": "bash"}}]
        });
        let message = |role, text: &str, calls: &[&str]| Message {
            role,
            text: text.to_owned(),
            tool_calls: calls.iter().map(|c| (*c).to_owned()).collect(),
        };
        assert_eq!(
            parse(&body),
            Ok(Conversation {
                model: "scripted".to_owned(),
                stream: true,
                messages: vec![
                    message(Role::System, "be brief", &[]),
                    message(Role::User, "create\nhello.txt", &[]),
                    message(Role::Assistant, "", &["write"]),
                    message(Role::Tool, "Wrote file successfully.", &[]),
                ],
                tools: vec!["write".to_owned(), "bash".to_owned()],
            })
        );
    }

    #[test]
    fn refuses_bodies_that_are_not_chat_requests() {
        assert_eq!(
            parse(&json!({"input": "hi"})),
            Err("the body has no `messages` array".to_owned())
        );
        assert_eq!(
            parse(&json!({"messages": [{"role": "robot", "content": "x"}]})),
            Err("messages[0]: unknown role \"robot\"".to_owned())
        );
    }
}
