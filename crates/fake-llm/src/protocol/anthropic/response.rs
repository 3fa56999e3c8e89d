//! The non-streamed answer (`stream: false`): one `message` document, and the parts of it the
//! stream shares (id, content block, stop reason, usage).

use serde_json::{Value, json};

use crate::conversation::Answer;
use crate::protocol::RenderContext;

/// The whole `message` document for `answer`.
pub(super) fn message(answer: &Answer, context: RenderContext<'_>) -> Value {
    json!({
        "id": message_id(context),
        "type": "message",
        "role": "assistant",
        "model": context.conversation.model,
        "content": [content_block(answer)],
        "stop_reason": stop_reason(answer),
        "stop_sequence": null,
        "usage": usage(context.usage.input, context.usage.output),
    })
}

/// The id of a response's message.
pub(super) fn message_id(context: RenderContext<'_>) -> String {
    format!("msg_fake_{}", context.request_index)
}

/// The answer as one complete content block (`text`, or `tool_use` with its input).
pub(super) fn content_block(answer: &Answer) -> Value {
    match answer {
        Answer::Text { text } => json!({"type": "text", "text": text}),
        Answer::ToolCall {
            name,
            arguments,
            call_id,
        } => json!({"type": "tool_use", "id": call_id, "name": name, "input": arguments}),
    }
}

/// `end_turn` after text, `tool_use` after a tool call.
pub(super) fn stop_reason(answer: &Answer) -> &'static str {
    match answer {
        Answer::Text { .. } => "end_turn",
        Answer::ToolCall { .. } => "tool_use",
    }
}

/// A `usage` object with these counts and no cache use.
pub(super) fn usage(input: u64, output: u64) -> Value {
    json!({
        "input_tokens": input,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output,
    })
}
