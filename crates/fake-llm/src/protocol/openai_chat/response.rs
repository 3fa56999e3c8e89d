//! The non-streamed answer (`stream: false`): one `chat.completion` document, and the parts
//! of it the streamed form shares (ids, finish reasons, usage).

use serde_json::{Value, json};

use crate::conversation::Answer;
use crate::protocol::{RenderContext, estimate_tokens};

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
                "function": {"name": name, "arguments": arguments.to_string()},
            }],
        }),
    };
    json!({
        "id": completion_id(context),
        "object": "chat.completion",
        "created": context.created,
        "model": context.conversation.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(answer)}],
        "usage": usage(answer, context),
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

/// Estimated token counts: the request's message texts in, the answer out.
pub(super) fn usage(answer: &Answer, context: RenderContext<'_>) -> Value {
    let prompt_chars: usize = context
        .conversation
        .messages
        .iter()
        .map(|message| message.text.chars().count())
        .sum();
    let answer_chars = match answer {
        Answer::Text { text } => text.chars().count(),
        Answer::ToolCall {
            name, arguments, ..
        } => name.len() + arguments.to_string().len(),
    };
    let prompt_tokens = estimate_tokens(prompt_chars);
    let completion_tokens = estimate_tokens(answer_chars);
    json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    })
}
