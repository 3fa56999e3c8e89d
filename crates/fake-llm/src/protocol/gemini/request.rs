//! Reading a `generateContent` request body into the neutral [`Conversation`].
//!
//! `systemInstruction` becomes a system message. A `model` content becomes one assistant
//! message (its text parts joined, its `functionCall` names as tool calls). A `user` content
//! becomes one tool result per `functionResponse` part, then one user message per text part:
//! Gemini CLI sends its `<session_context>` block and the prompt as two text parts of one
//! content, and the prompt must be the last user message for `when` and `{{prompt}}`. Tools
//! are the `functionDeclarations` names.

use serde_json::Value;

use crate::conversation::{Conversation, Message, Role};

/// Parses a Gemini request body; the model is filled in later from the path.
pub(super) fn parse(body: &Value, stream: bool) -> Result<Conversation, String> {
    let contents = body
        .get("contents")
        .and_then(Value::as_array)
        .ok_or("the body has no `contents` array")?;
    let mut messages = Vec::new();
    if let Some(system) = body.get("systemInstruction") {
        messages.push(message(Role::System, content_text(system), Vec::new()));
    }
    for (index, content) in contents.iter().enumerate() {
        read_content(content, &mut messages).map_err(|e| format!("contents[{index}]: {e}"))?;
    }
    Ok(Conversation {
        model: String::new(),
        stream,
        messages,
        tools: tool_names(body),
    })
}

/// Appends the messages of one `Content` to `messages`.
fn read_content(content: &Value, messages: &mut Vec<Message>) -> Result<(), String> {
    let parts = parts(content);
    match content.get("role").and_then(Value::as_str) {
        Some("model") => {
            let calls = parts
                .iter()
                .filter_map(|part| part.pointer("/functionCall/name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect();
            messages.push(message(Role::Assistant, content_text(content), calls));
        }
        Some("user" | "function") | None => {
            let results: Vec<&Value> = parts
                .iter()
                .filter_map(|part| part.get("functionResponse"))
                .collect();
            for result in &results {
                let output = result.get("response").map_or_else(String::new, output_text);
                messages.push(message(Role::Tool, output, Vec::new()));
            }
            let texts = text_parts(content);
            if results.is_empty() && texts.is_empty() {
                messages.push(message(Role::User, String::new(), Vec::new()));
            }
            for text in texts {
                messages.push(message(Role::User, text.to_owned(), Vec::new()));
            }
        }
        Some(other) => return Err(format!("unknown role {other:?}")),
    }
    Ok(())
}

fn message(role: Role, text: String, tool_calls: Vec<String>) -> Message {
    Message {
        role,
        text,
        tool_calls,
    }
}

/// The `parts` of a `Content`.
fn parts(content: &Value) -> &[Value] {
    content
        .get("parts")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text parts of a `Content` joined by newlines (a bare string counts as one text, as
/// `systemInstruction` may be sent); other parts are left out.
fn content_text(content: &Value) -> String {
    if let Some(text) = content.as_str() {
        return text.to_owned();
    }
    text_parts(content).join("\n")
}

/// The texts of a `Content`'s text parts, in order.
fn text_parts(content: &Value) -> Vec<&str> {
    parts(content)
        .iter()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect()
}

/// A function response as text: its `output` string when it has one (Gemini CLI's shape),
/// otherwise the response object as compact JSON.
fn output_text(response: &Value) -> String {
    match response.get("output").and_then(Value::as_str) {
        Some(output) => output.to_owned(),
        None => response.to_string(),
    }
}

/// The names in `tools[].functionDeclarations[]`.
fn tool_names(body: &Value) -> Vec<String> {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .filter_map(|declaration| declaration.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(role: Role, text: &str, calls: &[&str]) -> Message {
        super::message(
            role,
            text.to_owned(),
            calls.iter().map(|c| (*c).to_owned()).collect(),
        )
    }

    #[test]
    fn reads_system_roles_calls_results_and_tools() {
        let body = json!({
            "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "create"}, {"inlineData": {}}, {"text": "hello.txt"}]},
                {"role": "model", "parts": [{"text": "ok", "thoughtSignature": "x"}, {"functionCall": {"name": "write_file", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {"output": "Wrote it."}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "x", "response": {"error": "no"}}}, {"text": "go on"}]}
            ],
            "tools": [{"functionDeclarations": [{"name": "write_file"}, {"name": "run_shell_command"}]}, {"googleSearch": {}}]
        });
        assert_eq!(
            parse(&body, true),
            Ok(Conversation {
                model: String::new(),
                stream: true,
                messages: vec![
                    message(Role::System, "be brief", &[]),
                    message(Role::User, "create", &[]),
                    message(Role::User, "hello.txt", &[]),
                    message(Role::Assistant, "ok", &["write_file"]),
                    message(Role::Tool, "Wrote it.", &[]),
                    message(Role::Tool, "{\"error\":\"no\"}", &[]),
                    message(Role::User, "go on", &[]),
                ],
                tools: vec!["write_file".to_owned(), "run_shell_command".to_owned()],
            })
        );
    }

    #[test]
    fn refuses_bodies_that_are_not_gemini_requests() {
        assert_eq!(
            parse(&json!({"messages": []}), false),
            Err("the body has no `contents` array".to_owned())
        );
        assert_eq!(
            parse(&json!({"contents": [{"role": "robot"}]}), false),
            Err("contents[0]: unknown role \"robot\"".to_owned())
        );
    }
}
