//! The streamed answer: `chat.completion.chunk` events as OpenAI sends them.
//!
//! A role chunk, the content in a few pieces (text deltas, or a tool call whose first chunk
//! carries id and name and whose arguments follow in two pieces), a chunk with the finish
//! reason, a usage chunk with empty `choices` when `stream_options.include_usage` is set, and
//! `[DONE]`. Several pieces, so that clients' delta assembly is exercised.

use serde_json::{Value, json};

use super::response::{completion_id, finish_reason, usage};
use crate::conversation::Answer;
use crate::protocol::{RenderContext, SseEvent};

/// How many pieces a text answer is streamed in (fewer for short texts).
const TEXT_PIECES: usize = 4;

/// The events of a streamed answer, `[DONE]` included.
pub(super) fn chunks(answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
    let chunk = |delta: Value, finish: Option<&str>| {
        SseEvent::data(
            json!({
                "id": completion_id(context),
                "object": "chat.completion.chunk",
                "created": context.created,
                "model": context.conversation.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            })
            .to_string(),
        )
    };
    let mut events = vec![chunk(json!({"role": "assistant"}), None)];
    match answer {
        Answer::Text { text } => {
            for piece in pieces(text, TEXT_PIECES) {
                events.push(chunk(json!({"content": piece}), None));
            }
        }
        Answer::ToolCall {
            name,
            arguments,
            call_id,
        } => {
            events.push(chunk(
                json!({"tool_calls": [{
                    "index": 0,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]}),
                None,
            ));
            for piece in pieces(&arguments.to_string(), 2) {
                events.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
        }
    }
    events.push(chunk(json!({}), Some(finish_reason(answer))));
    let wants_usage = context
        .body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if wants_usage {
        events.push(SseEvent::data(
            json!({
                "id": completion_id(context),
                "object": "chat.completion.chunk",
                "created": context.created,
                "model": context.conversation.model,
                "choices": [],
                "usage": usage(context),
            })
            .to_string(),
        ));
    }
    events.push(SseEvent::data("[DONE]"));
    events
}

/// Splits `text` into at most `count` non-empty pieces of about equal length, on character
/// boundaries; an empty text is one empty piece.
pub(crate) fn pieces(text: &str, count: usize) -> Vec<&str> {
    let chars = text.chars().count();
    if chars == 0 {
        return vec![text];
    }
    let size = chars.div_ceil(count.max(1));
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest
            .char_indices()
            .nth(size)
            .map_or(rest.len(), |(index, _)| index);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn pieces_cover_the_text_on_char_boundaries() {
        assert_eq!(pieces("", 4), vec![""]);
        assert_eq!(pieces("ab", 4), vec!["a", "b"]);
        assert_eq!(pieces("héllo wörld", 4), vec!["hél", "lo ", "wör", "ld"]);
        assert_eq!(pieces("{\"a\":1}", 2), vec!["{\"a\"", ":1}"]);
    }
}
