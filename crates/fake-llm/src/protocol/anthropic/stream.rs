//! The streamed answer: named server-sent events as the Messages API sends them.
//!
//! `message_start` (the message with empty content and the input tokens), one content block
//! (`content_block_start`, deltas, `content_block_stop`), `message_delta` (stop reason and
//! the output tokens) and `message_stop`. Text comes as `text_delta` pieces; a tool call's
//! block starts with its id, name and empty input, and its input (compact JSON) follows as
//! `input_json_delta` pieces. Several pieces, so that clients' delta assembly is exercised.

use serde_json::{Value, json};

use super::response::{message_id, stop_reason, usage};
use crate::conversation::Answer;
use crate::protocol::openai_chat::pieces;
use crate::protocol::{RenderContext, SseEvent};

/// How many pieces a text answer is streamed in (fewer for short texts).
const TEXT_PIECES: usize = 4;

/// How many pieces a tool call's input is streamed in.
const INPUT_PIECES: usize = 3;

/// The events of a streamed answer, `message_stop` included.
pub(super) fn events(answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
    let start = json!({
        "type": "message_start",
        "message": {
            "id": message_id(context),
            "type": "message",
            "role": "assistant",
            "model": context.conversation.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            // As the API does: the final output count comes with `message_delta`.
            "usage": usage(context.usage.input, 1),
        },
    });
    let mut events = vec![named(start)];
    let (empty_block, deltas) = match answer {
        Answer::Text { text } => (
            json!({"type": "text", "text": ""}),
            pieces(text, TEXT_PIECES)
                .into_iter()
                .map(|piece| json!({"type": "text_delta", "text": piece}))
                .collect::<Vec<_>>(),
        ),
        Answer::ToolCall {
            name,
            arguments,
            call_id,
        } => (
            json!({"type": "tool_use", "id": call_id, "name": name, "input": {}}),
            pieces(&arguments.to_string(), INPUT_PIECES)
                .into_iter()
                .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
                .collect(),
        ),
    };
    events.push(named(json!({
        "type": "content_block_start",
        "index": 0,
        "content_block": empty_block,
    })));
    for delta in deltas {
        events.push(named(json!({
            "type": "content_block_delta",
            "index": 0,
            "delta": delta,
        })));
    }
    events.push(named(json!({"type": "content_block_stop", "index": 0})));
    events.push(named(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(answer), "stop_sequence": null},
        "usage": {"output_tokens": context.usage.output},
    })));
    events.push(named(json!({"type": "message_stop"})));
    events
}

/// An event named after its payload's `type`, as the API names them.
fn named(payload: Value) -> SseEvent {
    SseEvent {
        event: payload
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_owned),
        data: payload.to_string(),
    }
}
