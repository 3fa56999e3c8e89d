//! The full parse of one stream-json line into ganger's events, for Claude Code and Qwen Code.
//!
//! A line is first read as a `serde_json::Value` (serde_json alone judges whether it is JSON;
//! the last of duplicate keys wins), then through the [`wire`](super::wire) types.
//!
//! - Not a JSON object with a string `type`: malformed (`kind: None`).
//! - `system`: `init` yields [`Event::Session`]; `api_retry` yields [`Event::Retry`] (not
//!   progress); `permission_denied` (Claude Code 2.1.332) yields [`Event::PermissionRejected`];
//!   any other subtype only counts.
//! - `assistant`: each `text` block yields [`Event::Text`], unless the message is an error in
//!   the model's place (Claude's model `<synthetic>`, Qwen's `[API Error: …]` text): that is
//!   never the answer, and the `result` line reports it. Each `tool_use` block yields
//!   [`Event::ToolStarted`] and is remembered by id.
//! - `user`: each `tool_result` block yields [`Event::Tool`] named after the call it answers,
//!   [`ToolStatus::Error`] with the result's text when `is_error`.
//! - `result`: [`Event::StepFinished`] with the usage ([`Dialect::usage_mode`]) and the
//!   round's own cost ([`Dialect::cost`]), then an
//!   [`Event::PermissionRejected`] for each call its `permission_denials` lists that no
//!   `permission_denied` line reported ([`Denials`]), then [`Event::Text`] with the answer, or
//!   [`Event::Error`] when the run failed, then [`Event::Ended`]. A refused call fails the round
//!   even though the model was told and carried on, as OpenCode's refusals do: the agent was
//!   kept from something it judged part of the work.
//! - `stream_event` only counts; any other type yields [`Event::Unknown`], as does an
//!   `assistant` or `user` line without a message.

use crate::ParsedLine;
use crate::opencode::Lenient;
use crate::stream::json_object;
use crate::stream_json::denials::Denials;
use crate::stream_json::dialect::Dialect;
use crate::stream_json::tool_calls::{self, OpenCall, ToolCalls};
use crate::stream_json::wire::{
    ContentBlock, Envelope, Message, Payload, ResultLine, ResultUsage, SystemLine,
};
use ganger_events::{Event, ToolStatus, Usage};
use serde::Deserialize;
use serde_json::Value;

/// The model Claude Code names on messages it wrote itself (API errors).
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// Reads one line (without its terminator) into its type and events, remembering tool calls
/// in `calls` across lines.
pub fn parse_line(
    dialect: Dialect,
    calls: &mut ToolCalls,
    denials: &mut Denials,
    line: &[u8],
) -> ParsedLine {
    let Some(value) = json_object(line) else {
        return ParsedLine::malformed();
    };
    let envelope = Envelope::deserialize(&value).unwrap_or_default();
    let Some(kind) = envelope.kind.into_inner() else {
        return ParsedLine::malformed();
    };
    // Every field is lenient and optional, so this cannot fail on an object; if it ever did,
    // the line would still count, as a type this adapter cannot read.
    let payload = Payload::deserialize(&value).unwrap_or(Payload::Other);
    let unknown = || vec![Event::Unknown { kind: kind.clone() }];
    let events = match payload {
        Payload::System(system) => system_events(system, calls, denials),
        Payload::Assistant { message } => message
            .into_inner()
            .map_or_else(unknown, |message| assistant_events(dialect, calls, message)),
        Payload::User { message } => message
            .into_inner()
            .map_or_else(unknown, |message| user_events(calls, denials, message)),
        Payload::Result(result) => {
            calls.clear();
            result_events(dialect, denials, result)
        }
        Payload::StreamEvent => Vec::new(),
        Payload::Other => unknown(),
    };
    ParsedLine {
        kind: Some(kind),
        events,
    }
}

fn system_events(system: SystemLine, calls: &ToolCalls, denials: &mut Denials) -> Vec<Event> {
    match system.subtype.get().map(String::as_str) {
        Some("init") => system
            .session_id
            .into_inner()
            .map(|id| Event::Session { id })
            .into_iter()
            .collect(),
        Some("api_retry") => vec![Event::Retry {
            message: retry_message(&system),
        }],
        Some("permission_denied") => {
            let id = system.tool_use_id.into_inner();
            let title = calls.get(id.as_deref()).and_then(|call| call.title.clone());
            vec![denials.refused_now(
                system.tool_name.into_inner(),
                id,
                title.as_deref(),
                system.decision_reason.into_inner(),
                system.message.into_inner(),
            )]
        }
        _ => Vec::new(),
    }
}

/// "API request failed (HTTP 500, server_error); retry 1 of 2".
fn retry_message(system: &SystemLine) -> String {
    let mut cause = Vec::new();
    if let Some(status) = system.error_status.get() {
        cause.push(format!("HTTP {status}"));
    }
    if let Some(error) = system.error.get() {
        cause.push(error.clone());
    }
    let mut message = match cause.is_empty() {
        true => "API request failed".to_owned(),
        false => format!("API request failed ({})", cause.join(", ")),
    };
    match (system.attempt.get(), system.max_retries.get()) {
        (Some(attempt), Some(max)) => message.push_str(&format!("; retry {attempt} of {max}")),
        (Some(attempt), None) => message.push_str(&format!("; retry {attempt}")),
        _ => {}
    }
    message
}

/// The blocks of a message's content that could be read, in order.
fn blocks(message: Message) -> impl Iterator<Item = ContentBlock> {
    let list = match message.content {
        Some(Value::Array(list)) => list,
        _ => Vec::new(),
    };
    list.into_iter()
        .filter_map(|block| ContentBlock::deserialize(block).ok())
}

fn assistant_events(dialect: Dialect, calls: &mut ToolCalls, message: Message) -> Vec<Event> {
    let synthetic = message.model.get().map(String::as_str) == Some(SYNTHETIC_MODEL);
    let mut events = Vec::new();
    for block in blocks(message) {
        match block {
            ContentBlock::Text { text } => {
                let Some(text) = text.into_inner() else {
                    continue;
                };
                if !synthetic && dialect.text_error(&text).is_none() {
                    events.push(Event::Text { text });
                }
            }
            ContentBlock::ToolUse { id, name, input } => {
                let call = OpenCall {
                    name: name
                        .into_inner()
                        .unwrap_or_else(|| tool_calls::UNNAMED_TOOL.to_owned()),
                    title: tool_calls::title(input.as_ref()),
                };
                events.push(Event::ToolStarted {
                    name: call.name.clone(),
                    title: call.title.clone(),
                });
                calls.start(id.into_inner(), call);
            }
            ContentBlock::ToolResult { .. } | ContentBlock::Other => {}
        }
    }
    events
}

fn user_events(calls: &mut ToolCalls, denials: &mut Denials, message: Message) -> Vec<Event> {
    let mut events = Vec::new();
    for block in blocks(message) {
        let ContentBlock::ToolResult {
            tool_use_id,
            is_error,
            content,
        } = block
        else {
            continue;
        };
        let id = tool_use_id.get().map(String::as_str);
        let call = calls.end(id);
        let failed = is_error.into_inner().unwrap_or(false);
        let error = failed.then(|| content_text(content.as_ref()));
        if let Some(error) = &error {
            denials.tool_failed(id, error);
        }
        events.push(Event::Tool {
            name: call.name,
            status: if failed {
                ToolStatus::Error
            } else {
                ToolStatus::Completed
            },
            title: call.title,
            error,
        });
    }
    events
}

/// The text of a tool result: a string, or the text blocks of a list, one per line.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text")?.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn result_events(dialect: Dialect, denials: &mut Denials, result: ResultLine) -> Vec<Event> {
    let usage = result.usage.clone().into_inner().unwrap_or_default();
    let cost = dialect.cost(
        result.total_cost_usd.get().copied(),
        cost_since_last_result(&result),
    );
    let mut events = vec![Event::StepFinished {
        reason: result.stop_reason.clone().into_inner(),
        usage: result_usage(dialect, usage, cost),
    }];
    events.extend(denials.listed(result.permission_denials.as_ref()));
    match result_error(dialect, result) {
        Ok(Some(text)) => events.push(Event::Text { text }),
        Ok(None) => {}
        Err(error) => events.push(error),
    }
    events.push(Event::Ended);
    events
}

/// What a result's `model_usage_since_last_result` cost: the sum over its models (0 for `{}`,
/// a run no request of which was answered); a model without a readable `costUSD` adds nothing.
/// `None` when the line has no such map (Claude Code before 2.1.332, Qwen Code).
fn cost_since_last_result(result: &ResultLine) -> Option<f64> {
    let models = result.model_usage_since_last_result.get()?;
    Some(
        models
            .values()
            .filter_map(|model| model.get()?.cost_usd.get().copied())
            // Not `sum()`: an empty f64 sum is -0.0.
            .fold(0.0, |sum, cost| sum + cost),
    )
}

fn result_usage(dialect: Dialect, usage: ResultUsage, cost_usd: Option<f64>) -> Usage {
    let count = |field: Lenient<u64>| field.into_inner().unwrap_or(0);
    Usage {
        input: count(usage.input_tokens),
        output: count(usage.output_tokens),
        reasoning: 0,
        cache_read: count(usage.cache_read_input_tokens),
        cache_write: count(usage.cache_creation_input_tokens),
        cost_usd,
        mode: dialect.usage_mode(),
    }
}

/// The answer of a run that succeeded (if it gave one), or the error of one that failed.
///
/// A run failed when `is_error` is true, when `api_error_status` is set (Claude prints
/// `subtype: "success"` on API errors), or when the dialect reads the text as an error (Qwen).
/// The text is `result`, else the `error.message` Qwen 0.24 gives in its place.
fn result_error(dialect: Dialect, result: ResultLine) -> Result<Option<String>, Event> {
    let text = result
        .result
        .into_inner()
        .or_else(|| error_message(result.error.as_ref()))
        .filter(|text| !text.is_empty());
    let status = result.api_error_status.into_inner();
    if let Some(error) = text.as_deref().and_then(|text| dialect.text_error(text)) {
        return Err(Event::Error {
            name: "api_error".to_owned(),
            message: error.message,
            status_code: error.status.or(status),
            retryable: None,
        });
    }
    if !result.is_error.into_inner().unwrap_or(false) && status.is_none() {
        return Ok(text);
    }
    let name = match result.subtype.into_inner() {
        Some(subtype) if !subtype.is_empty() && subtype != "success" => subtype,
        _ => "api_error".to_owned(),
    };
    let message = text
        .or_else(|| listed_errors(result.errors.as_ref()))
        .unwrap_or_else(|| "the result line gave no details".to_owned());
    Err(Event::Error {
        name,
        message,
        status_code: status,
        retryable: None,
    })
}

/// The message of a result's `error` object.
fn error_message(error: Option<&Value>) -> Option<String> {
    error?.get("message")?.as_str().map(str::to_owned)
}

/// The `errors` of a result without text, joined.
fn listed_errors(errors: Option<&Value>) -> Option<String> {
    let joined = match errors? {
        Value::String(text) => text.clone(),
        Value::Array(list) => list
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("; "),
        _ => String::new(),
    };
    (!joined.is_empty()).then_some(joined)
}
