//! The unary answer (`generateContent`): one `GenerateContentResponse`, and the parts of it
//! the streamed form shares (the candidate, usage, ids).

use serde_json::{Value, json};

use crate::conversation::Answer;
use crate::protocol::RenderContext;

/// The whole `GenerateContentResponse` for `answer`.
pub(super) fn document(answer: &Answer, context: RenderContext<'_>) -> Value {
    let part = match answer {
        Answer::Text { text } => json!({"text": text}),
        Answer::ToolCall { .. } => function_call_part(answer),
    };
    response(vec![part], true, context)
}

/// A `GenerateContentResponse` with one candidate made of `parts`; `last` adds the finish
/// reason and the usage, as the last event of a stream carries them.
pub(super) fn response(parts: Vec<Value>, last: bool, context: RenderContext<'_>) -> Value {
    let mut candidate = json!({
        "content": {"role": "model", "parts": parts},
        "index": 0,
    });
    let mut response = json!({
        "candidates": [],
        "modelVersion": context.conversation.model,
        "responseId": format!("fake-{}", context.request_index),
    });
    if last {
        candidate["finishReason"] = json!("STOP");
        response["usageMetadata"] = usage(context);
    }
    response["candidates"] = json!([candidate]);
    response
}

/// `{"functionCall":{"name","args"}}` for a tool call (Gemini sends no call ids; the CLI
/// makes its own).
pub(super) fn function_call_part(answer: &Answer) -> Value {
    match answer {
        Answer::ToolCall {
            name, arguments, ..
        } => json!({"functionCall": {"name": name, "args": arguments}}),
        Answer::Text { text } => json!({"text": text}),
    }
}

/// The answer's token counts in Gemini's shape.
fn usage(context: RenderContext<'_>) -> Value {
    let usage = context.usage;
    json!({
        "promptTokenCount": usage.input,
        "candidatesTokenCount": usage.output,
        "totalTokenCount": usage.input + usage.output,
    })
}
