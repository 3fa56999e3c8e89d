//! What the JSON request bodies of Anthropic Messages and the two OpenAI APIs hold alike: the
//! model and the stream flag at the top, a `tools` array, and `content` fields that are a
//! string or an array of parts.

use serde_json::Value;

use crate::conversation::{Conversation, Message};

/// The conversation of `body`, its messages read: the body's `model` (empty when missing)
/// and `stream` (false when missing), and the names `name` reads in its `tools` array.
pub(crate) fn conversation<'a>(
    body: &'a Value,
    messages: Vec<Message>,
    name: impl Fn(&'a Value) -> Option<&'a str>,
) -> Conversation {
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| tools.iter().filter_map(name).map(str::to_owned).collect())
        .unwrap_or_default();
    Conversation {
        model: body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        messages,
        tools,
    }
}

/// The texts of a `content` field: a string, or the `text` of every part that has one
/// (`text`, `input_text`, `output_text`); images, files and other parts are left out.
pub(crate) fn text_parts(content: Option<&Value>) -> Vec<&str> {
    match content {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}
