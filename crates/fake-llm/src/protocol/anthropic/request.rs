//! Reading a Messages request body into the neutral [`Conversation`].
//!
//! - The top-level `system` (a string or text blocks) becomes a system message first; `system`
//!   entries inside `messages` (Claude Code's mid-conversation system messages) stay where they
//!   are, as system messages.
//! - `content` may be a string or an array of blocks. Text blocks give the message's text;
//!   `tool_use` blocks give an assistant message's tool calls; `thinking`, `image` and other
//!   blocks are left out.
//! - A user message carrying `tool_result` blocks becomes one tool message per result (its
//!   text is the result's content), so the request continues a round instead of opening one.
//!   Text blocks beside the results are added to the last result's text.
//! - Text blocks of a user message that start with `<system-reminder>` are context the agent
//!   adds, not the person's prompt ([`reminders`]): they are left out of the prompt text, and
//!   a user message made only of them becomes a system message. So `new_prompt()` and
//!   `{{history}}` see what was typed.

use serde_json::Value;

use crate::conversation::{Conversation, Message, Role};
use crate::protocol::{reminders, request_body};

/// Parses a Messages request body.
pub(super) fn parse(body: &Value) -> Result<Conversation, String> {
    let wire_messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("the body has no `messages` array")?;
    let mut messages = Vec::new();
    if let Some(system) = body.get("system") {
        messages.push(plain(Role::System, text_of(system)));
    }
    for (index, message) in wire_messages.iter().enumerate() {
        let parsed = parse_message(message).map_err(|e| format!("messages[{index}]: {e}"))?;
        messages.extend(parsed);
    }
    Ok(request_body::conversation(body, messages, |tool| {
        tool.get("name").and_then(Value::as_str)
    }))
}

/// One wire message as one or more neutral messages (several for a batch of tool results).
fn parse_message(message: &Value) -> Result<Vec<Message>, String> {
    let content = message.get("content").unwrap_or(&Value::Null);
    match message.get("role").and_then(Value::as_str) {
        Some("system") => Ok(vec![plain(Role::System, text_of(content))]),
        Some("assistant") => Ok(vec![assistant(content)]),
        Some("user") => Ok(user(content)),
        Some(other) => Err(format!("unknown role {other:?}")),
        None => Err("no `role`".to_owned()),
    }
}

fn assistant(content: &Value) -> Message {
    let tool_calls = blocks(content)
        .iter()
        .filter(|block| block_type(block) == "tool_use")
        .filter_map(|block| block.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    Message {
        role: Role::Assistant,
        text: text_of(content),
        tool_calls,
    }
}

/// A user message: tool results, a prompt, or only reminders (a system message).
fn user(content: &Value) -> Vec<Message> {
    let blocks = blocks(content);
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|block| block_type(block) == "text")
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let results: Vec<&Value> = blocks
        .iter()
        .filter(|block| block_type(block) == "tool_result")
        .collect();
    if !results.is_empty() {
        let mut messages: Vec<Message> = results
            .iter()
            .map(|result| {
                plain(
                    Role::Tool,
                    text_of(result.get("content").unwrap_or(&Value::Null)),
                )
            })
            .collect();
        if let Some(last) = messages.last_mut() {
            for text in texts {
                last.text = join(&last.text, text);
            }
        }
        return messages;
    }
    let (context, typed) = reminders::split(&texts);
    let only_reminders = typed.is_empty() && !context.is_empty() && blocks.len() == context.len();
    if only_reminders {
        vec![plain(Role::System, context.join("\n"))]
    } else {
        vec![plain(Role::User, typed.join("\n"))]
    }
}

/// `content` as a list of blocks: a string is one text block.
fn blocks(content: &Value) -> Vec<Value> {
    match content {
        Value::String(text) => vec![serde_json::json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

fn block_type(block: &Value) -> &str {
    block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The text of `content` (a string, or the text blocks joined by newlines).
fn text_of(content: &Value) -> String {
    blocks(content)
        .iter()
        .filter(|block| block_type(block) == "text")
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

fn join(first: &str, second: &str) -> String {
    if first.is_empty() {
        second.to_owned()
    } else {
        format!("{first}\n{second}")
    }
}

fn plain(role: Role, text: String) -> Message {
    Message {
        role,
        text,
        tool_calls: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(role: Role, text: &str, calls: &[&str]) -> Message {
        Message {
            role,
            text: text.to_owned(),
            tool_calls: calls.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    #[test]
    fn reads_system_prompts_reminders_tool_uses_results_and_tools() {
        let body = json!({
            "model": "claude-fake",
            "stream": true,
            "system": [{"type": "text", "text": "You are Claude Code."}, {"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>\nCLAUDE.md says hi\n</system-reminder>"},
                    {"type": "text", "text": "Please create a.txt"}
                ]},
                {"role": "system", "content": "Agents: general-purpose"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "x"},
                    {"type": "text", "text": "Writing."},
                    {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": "a.txt"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "File created"},
                    {"type": "text", "text": "<system-reminder>todo list empty</system-reminder>"}
                ]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "ok"}, {"type": "image"}]}]},
                {"role": "user", "content": "<system-reminder>only context</system-reminder>"}
            ],
            "tools": [{"name": "Write", "input_schema": {}}, {"name": "Bash", "input_schema": {}}]
        });
        assert_eq!(
            parse(&body),
            Ok(Conversation {
                model: "claude-fake".to_owned(),
                stream: true,
                messages: vec![
                    message(Role::System, "You are Claude Code.\nBe brief.", &[]),
                    message(Role::User, "Please create a.txt", &[]),
                    message(Role::System, "Agents: general-purpose", &[]),
                    message(Role::Assistant, "Writing.", &["Write"]),
                    message(
                        Role::Tool,
                        "File created\n<system-reminder>todo list empty</system-reminder>",
                        &[]
                    ),
                    message(Role::Tool, "ok", &[]),
                    message(
                        Role::System,
                        "<system-reminder>only context</system-reminder>",
                        &[]
                    ),
                ],
                tools: vec!["Write".to_owned(), "Bash".to_owned()],
            })
        );
    }

    #[test]
    fn a_string_prompt_without_system_or_tools_is_a_plain_side_request() {
        let body = json!({"model": "m", "messages": [{"role": "user", "content": "title this"}]});
        let conversation = parse(&body).unwrap();
        assert_eq!(
            conversation.messages,
            vec![message(Role::User, "title this", &[])]
        );
        assert!(!conversation.stream && conversation.tools.is_empty());
        assert_eq!(conversation.new_prompt(), Some("title this"));
    }

    #[test]
    fn refuses_bodies_that_are_not_messages_requests() {
        assert_eq!(
            parse(&json!({"prompt": "hi"})),
            Err("the body has no `messages` array".to_owned())
        );
        assert_eq!(
            parse(&json!({"messages": [{"role": "tool", "content": "x"}]})),
            Err("messages[0]: unknown role \"tool\"".to_owned())
        );
    }
}
