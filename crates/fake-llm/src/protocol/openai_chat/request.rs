//! Reading a chat completions request body into the neutral [`Conversation`].
//!
//! Lenient where agents differ (content as a string, an array of parts or null; roles
//! `developer` and `function`), strict where a missing field means the body is not a chat
//! request at all (no `messages` array).
//!
//! Text parts of a user message that start with `<system-reminder>` are context the agent
//! adds (Qwen Code 0.24 sends its skills, tools and date so, beside the prompt): they are left
//! out of the prompt's text, and a user message made only of them is a system message
//! ([`reminders`]).

use serde_json::Value;

use crate::conversation::{Conversation, Message, Role};
use crate::protocol::{reminders, request_body};

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
    Ok(request_body::conversation(body, messages, tool_name))
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
    let texts = request_body::text_parts(message.get("content"));
    if role == Role::User {
        let (context, typed) = reminders::split(&texts);
        if typed.is_empty() && !context.is_empty() {
            return Ok(Message {
                role: Role::System,
                text: context.join("\n"),
                tool_calls,
            });
        }
        return Ok(Message {
            role,
            text: typed.join("\n"),
            tool_calls,
        });
    }
    Ok(Message {
        role,
        text: texts.join("\n"),
        tool_calls,
    })
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
    fn reminder_parts_of_a_user_message_are_not_the_prompt() {
        // Qwen Code 0.24.4's first request (texts shortened): four reminder parts, then the
        // prompt, in one user message; a later round's prompt follows one reminder.
        let body = json!({
            "model": "qwen-fake",
            "messages": [
                {"role": "system", "content": "You are Qwen Code."},
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>\nThe following skills are available\n</system-reminder>"},
                    {"type": "text", "text": "<system-reminder>\nThis is the Qwen Code. We are setting up the context\n</system-reminder>"},
                    {"type": "text", "text": "Please do round one: create hello.txt"}
                ]},
                {"role": "assistant", "content": "Done round 1."},
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>\nThe current date is today.\n</system-reminder>"},
                    {"type": "text", "text": "Now round two"}
                ]},
                {"role": "user", "content": "<system-reminder>only context</system-reminder>"}
            ],
            "tools": [{"type": "function", "function": {"name": "write_file"}}]
        });
        let conversation = parse(&body).unwrap();
        assert_eq!(
            conversation.prompts(),
            vec!["Please do round one: create hello.txt", "Now round two"]
        );
        assert_eq!(
            conversation.messages.last(),
            Some(&Message {
                role: Role::System,
                text: "<system-reminder>only context</system-reminder>".to_owned(),
                tool_calls: Vec::new(),
            })
        );
        assert_eq!(conversation.new_prompt(), Some("Now round two"));
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
