//! The non-streamed answer (`stream: false`): one `chat.completion` document, and the parts
//! of it the streamed form shares (ids, finish reasons, usage).

use serde_json::{Value, json};

use crate::conversation::{Answer, arguments_text};
use crate::protocol::RenderContext;

/// The whole `chat.completion` document for `answer`.
pub(super) fn completion(answer: &Answer, context: RenderContext<'_>) -> Value {
    let message = match answer {
        Answer::Text { text } => json!({"role": "assistant", "content": text}),
        Answer::ToolCall {
            name,
            arguments,
            call_id,
        } => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": arguments_text(arguments)},
            }],
        }),
    };
    json!({
        "id": completion_id(context),
        "object": "chat.completion",
        "created": context.created,
        "model": context.conversation.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(answer)}],
        "usage": usage(context),
    })
}

/// The id shared by a response's document or chunks.
pub(super) fn completion_id(context: RenderContext<'_>) -> String {
    format!("chatcmpl-fake-{}", context.request_index)
}

/// `stop` after text, `tool_calls` after a tool call.
pub(super) fn finish_reason(answer: &Answer) -> &'static str {
    match answer {
        Answer::Text { .. } => "stop",
        Answer::ToolCall { .. } => "tool_calls",
    }
}

/// The answer's token counts in chat completions' shape.
pub(super) fn usage(context: RenderContext<'_>) -> Value {
    let usage = context.usage;
    json!({
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
    })
}
