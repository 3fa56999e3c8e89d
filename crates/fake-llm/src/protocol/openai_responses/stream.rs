//! The streamed answer: named events as the Responses API sends them.
//!
//! `response.created`, `response.in_progress`, `response.output_item.added`, then for text a
//! content part whose text comes in a few `response.output_text.delta` pieces, for a function
//! call `response.function_call_arguments.delta`/`.done`, for a custom tool call
//! `response.custom_tool_call_input.delta`/`.done`, then `response.output_item.done` and
//! `response.completed` with the usage. Every event carries its `type` (the same as its
//! `event:` line) and a `sequence_number`; there is no `[DONE]`.

use serde_json::{Value, json};

use super::response::{CallKind, call_kind, document, item_id, output_item, output_text_part};
use crate::conversation::{Answer, arguments_text};
use crate::protocol::openai_chat::stream::pieces;
use crate::protocol::{RenderContext, SseEvent};

/// How many pieces a text answer is streamed in (fewer for short texts).
const TEXT_PIECES: usize = 4;

/// How many pieces a call's arguments or input are streamed in.
const CALL_PIECES: usize = 2;

/// The events of a streamed answer.
pub(super) fn events(answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
    let item = item_id(answer, context);
    let mut payloads = vec![
        json!({"type": "response.created", "response": document(answer, context, "in_progress")}),
        json!({"type": "response.in_progress", "response": document(answer, context, "in_progress")}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": output_item(answer, context, false)}),
    ];
    let at_item = |kind: &str, fields: Value| {
        let mut event = json!({"type": kind, "item_id": item, "output_index": 0});
        if let (Some(event), Value::Object(fields)) = (event.as_object_mut(), fields) {
            event.extend(fields);
        }
        event
    };
    match answer {
        Answer::Text { text } => {
            let part = |text: &str| json!({"content_index": 0, "part": output_text_part(text)});
            payloads.push(at_item("response.content_part.added", part("")));
            for piece in pieces(text, TEXT_PIECES) {
                payloads.push(at_item(
                    "response.output_text.delta",
                    json!({"content_index": 0, "delta": piece}),
                ));
            }
            payloads.push(at_item(
                "response.output_text.done",
                json!({"content_index": 0, "text": text}),
            ));
            payloads.push(at_item("response.content_part.done", part(text)));
        }
        Answer::ToolCall {
            name, arguments, ..
        } => {
            let (prefix, field) = match call_kind(name, context) {
                CallKind::Function => ("response.function_call_arguments", "arguments"),
                CallKind::Custom => ("response.custom_tool_call_input", "input"),
            };
            let text = arguments_text(arguments);
            for piece in pieces(&text, CALL_PIECES) {
                payloads.push(at_item(&format!("{prefix}.delta"), json!({"delta": piece})));
            }
            payloads.push(at_item(&format!("{prefix}.done"), json!({field: text})));
        }
    }
    payloads.push(json!({"type": "response.output_item.done", "output_index": 0, "item": output_item(answer, context, true)}));
    payloads.push(
        json!({"type": "response.completed", "response": document(answer, context, "completed")}),
    );
    payloads
        .into_iter()
        .enumerate()
        .map(|(sequence, mut payload)| {
            payload["sequence_number"] = json!(sequence);
            let name = payload["type"].as_str().unwrap_or_default().to_owned();
            SseEvent {
                event: Some(name),
                data: payload.to_string(),
            }
        })
        .collect()
}
