//! The full parse of one OpenCode line into ganger's events: the reference the fast summary
//! path is held to, and what `ganger log` shows.
//!
//! A line is first read as a `serde_json::Value`, so that serde_json alone judges whether it is
//! JSON (and the last of duplicate keys wins), then through the [`wire`](super::wire) types.
//!
//! - A line that is not a JSON object with a string `type` is malformed (`kind: None`).
//! - A line with a string `sessionID` yields [`Event::Session`] first, whatever its type.
//! - `step_start` yields [`Event::StepStarted`]; `step_finish` yields [`Event::StepFinished`]
//!   with the step's tokens and cost ([`UsageMode::Delta`]); `text` yields [`Event::Text`];
//!   `reasoning` yields nothing more (it is counted by type only).
//! - `tool_use` yields [`Event::Tool`], or [`Event::PermissionRejected`] when the call's error
//!   is OpenCode's refusal by a permission rule (an `ask` auto-rejected by `opencode run`, or a
//!   `deny`); OpenCode stops the run after either.
//! - `error` yields [`Event::Error`] with the most readable name, HTTP status and message found,
//!   in the 1.18 shape (`name`, `data.message`, `data.statusCode`) or the older one (`type`,
//!   `message`).
//! - Any other type yields [`Event::Unknown`].
//!
//! Lines of a known type but an unexpected shape are never fatal. Fields are read leniently
//! (one of the wrong type counts as absent). A line that lacks what its type is about (a `text`
//! without a string `text`, a `tool_use` without a readable `state.status`) yields
//! [`Event::Unknown`]: counted under its type and as unknown, kept in the raw stream, and unable
//! to fake progress (a `step_finish` is never dropped this way: it has nothing mandatory, so
//! the step counts as finished). An `error` line always yields [`Event::Error`], whatever its
//! shape, because OpenCode prints one only when the run failed.

use crate::ParsedLine;
use crate::opencode::wire::{
    CallStatus, Envelope, ErrorBody, ErrorField, Payload, StepFinishPart, ToolPart,
};
use crate::stream::json_object;
use ganger_events::{Event, ToolStatus, Usage, UsageMode};
use serde::Deserialize;

/// OpenCode's tool error when a permission set to `ask` was rejected (auto-rejected by
/// `opencode run`; also the start of a rejection with feedback), lowercased.
const ASK_REJECTED: &str = "the user rejected permission to use this specific tool call";

/// OpenCode's tool error when a permission rule set to `deny` refused the call, lowercased.
const DENY_REFUSED: &str =
    "the user has specified a rule which prevents you from using this specific tool call";

/// The name of a tool call whose line names no tool.
const UNNAMED_TOOL: &str = "?";

/// Parses one line (without its line terminator) into its type and events.
pub fn parse_line(line: &[u8]) -> ParsedLine {
    let Some(value) = json_object(line) else {
        return ParsedLine::malformed();
    };
    let envelope = Envelope::deserialize(&value).unwrap_or_default();
    let Some(kind) = envelope.kind.into_inner() else {
        return ParsedLine::malformed();
    };
    let mut events = Vec::with_capacity(2);
    if let Some(id) = envelope.session_id.into_inner() {
        events.push(Event::Session { id });
    }
    // Every variant's fields are lenient and optional, so this cannot fail on an object; if
    // it ever did, the line would still count, as a type this adapter cannot read.
    let payload = Payload::deserialize(&value).unwrap_or(Payload::Other);
    events.extend(payload_event(&kind, payload));
    ParsedLine {
        kind: Some(kind),
        events,
    }
}

/// What a line's payload means, besides its session.
fn payload_event(kind: &str, payload: Payload) -> Option<Event> {
    let unknown = || Event::Unknown {
        kind: kind.to_owned(),
    };
    match payload {
        Payload::StepStart { .. } => Some(Event::StepStarted),
        Payload::StepFinish { part } => Some(step_finished(part.into_inner().unwrap_or_default())),
        Payload::Text { part } => Some(
            part.into_inner()
                .and_then(|part| part.text.into_inner())
                .map_or_else(unknown, |text| Event::Text { text }),
        ),
        Payload::Reasoning { .. } => None,
        Payload::ToolUse { part } => Some(
            part.into_inner()
                .and_then(tool_event)
                .unwrap_or_else(unknown),
        ),
        Payload::Error { error } => Some(error_event(error.into_inner())),
        // A known type whose payload could not be read at all still counts as that type;
        // an error line still fails the round.
        Payload::Other if kind == "error" => Some(error_event(None)),
        Payload::Other => Some(unknown()),
    }
}

fn step_finished(part: StepFinishPart) -> Event {
    let tokens = part.tokens.into_inner().unwrap_or_default();
    let cache = tokens.cache.into_inner().unwrap_or_default();
    let count = |field: crate::opencode::Lenient<u64>| field.into_inner().unwrap_or(0);
    Event::StepFinished {
        reason: part.reason.into_inner(),
        usage: Usage {
            input: count(tokens.input),
            output: count(tokens.output),
            reasoning: count(tokens.reasoning),
            cache_read: count(cache.read),
            cache_write: count(cache.write),
            cost_usd: part.cost.into_inner(),
            mode: UsageMode::Delta,
        },
    }
}

/// The event of a tool call, or `None` when its status cannot be read.
fn tool_event(part: ToolPart) -> Option<Event> {
    let state = part.state.into_inner()?;
    let status = state.status.into_inner()?;
    let name = part
        .tool
        .into_inner()
        .unwrap_or_else(|| UNNAMED_TOOL.to_owned());
    let error = state.error.into_inner();
    let status = match status {
        CallStatus::Completed => ToolStatus::Completed,
        CallStatus::Pending | CallStatus::Running => ToolStatus::Running,
        CallStatus::Error => match error {
            Some(message) if is_permission_refusal(&message) => {
                return Some(Event::PermissionRejected {
                    tool: name,
                    message,
                });
            }
            _ => ToolStatus::Error,
        },
    };
    Some(Event::Tool {
        name,
        status,
        title: state.title.into_inner(),
        error,
    })
}

/// Whether a tool error is OpenCode refusing the call by a permission rule (`ask` or `deny`).
pub fn is_permission_refusal(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    error.contains(ASK_REJECTED) || error.contains(DENY_REFUSED)
}

/// Whether a tool error is OpenCode refusing the call by a rule set to `deny`.
pub(crate) fn is_deny_refusal(error: &str) -> bool {
    error.to_ascii_lowercase().contains(DENY_REFUSED)
}

/// The event of an error line, from whatever of the error could be read.
fn error_event(error: Option<ErrorField>) -> Event {
    let body = match error {
        Some(ErrorField::Named(body)) => body,
        Some(ErrorField::Text(message)) => ErrorBody {
            message: crate::opencode::Lenient(Some(message)),
            ..ErrorBody::default()
        },
        None => ErrorBody::default(),
    };
    let data = body.data.into_inner().unwrap_or_default();
    let name = body
        .name
        .into_inner()
        .or(body.kind.into_inner())
        .filter(|name| !name.is_empty());
    let message = data
        .message
        .into_inner()
        .or(body.message.into_inner())
        .filter(|message| !message.is_empty());
    let (name, message) = match (name, message) {
        (Some(name), message) => (name, message.unwrap_or_default()),
        (None, Some(message)) => ("Error".to_owned(), message),
        (None, None) => (
            "Error".to_owned(),
            "the error line gave no details".to_owned(),
        ),
    };
    Event::Error {
        name,
        message,
        status_code: data.status_code.into_inner(),
        retryable: data.is_retryable.into_inner(),
    }
}
