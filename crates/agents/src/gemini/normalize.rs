//! The full parse of Gemini CLI lines into ganger's events. Gemini needs memory across lines,
//! so the parse is a [`GeminiStream`]:
//!
//! - `init` yields [`Event::Session`] and [`Event::StepStarted`] (the run's model work begins).
//! - A `message` of the user yields nothing beyond the count. The assistant's answer comes in
//!   pieces (`delta: true`): consecutive pieces are joined and each yields [`Event::Text`] with
//!   the whole text so far, so that the summary's answer is the whole answer. Any other line
//!   ends the answer; a later piece starts a new one.
//! - `tool_use` yields [`Event::ToolStarted`] and remembers the call's name by its id;
//!   `tool_result` yields [`Event::Tool`] under that name (`Error` with the error's text when
//!   the call failed: an ordinary tool error), or [`Event::PermissionRejected`] when Gemini's
//!   own guard refused the call: a `policy_violation`, or a path outside the workspace
//!   (`Path not in workspace: …`, measured with 0.61.0), the counterpart of Claude Code's
//!   `workingDir` refusal.
//! - `error` of severity `error` yields [`Event::Error`]; a `warning` yields nothing beyond the
//!   count (Gemini goes on after one).
//! - `result` ends the run with [`Event::Ended`]: `success` after [`Event::StepFinished`] with
//!   the run's totals ([`UsageMode::RoundTotal`]; Gemini reports no cost), anything else after
//!   [`Event::Error`] with the API's message and HTTP status when the text holds them.
//! - A line that is not a JSON object with a string `type` is malformed; any other type yields
//!   [`Event::Unknown`].

use crate::gemini::wire::{ErrorBody, Payload, Stats};
use crate::opencode::Lenient;
use crate::stream::json_object;
use crate::{ParsedLine, StreamParser};
use ganger_events::{Event, ToolStatus, Usage, UsageMode};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

/// The finish reason ganger records for a successful run.
pub const SUCCESS: &str = "success";

/// Reads a Gemini CLI `stream-json` stream; one per round.
#[derive(Debug, Clone, Default)]
pub struct GeminiStream {
    /// Tool names and titles by call id, from `tool_use` lines.
    tools: HashMap<String, (String, Option<String>)>,
    /// The assistant's answer so far, while its pieces keep coming.
    answer: Option<String>,
}

impl StreamParser for GeminiStream {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        let Some(value) = json_object(line) else {
            return ParsedLine::malformed();
        };
        let Some(kind) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
            return ParsedLine::malformed();
        };
        let payload = Payload::deserialize(&value).unwrap_or(Payload::Other);
        let events = self.events_of(&kind, payload);
        ParsedLine {
            kind: Some(kind),
            events,
        }
    }
}

impl GeminiStream {
    fn events_of(&mut self, kind: &str, payload: Payload) -> Vec<Event> {
        let unknown = || {
            vec![Event::Unknown {
                kind: kind.to_owned(),
            }]
        };
        let answer = self.answer.take();
        match payload {
            Payload::Init { session_id, .. } => match session_id.into_inner() {
                Some(id) => vec![Event::Session { id }, Event::StepStarted],
                None => vec![Event::StepStarted],
            },
            Payload::Message {
                role,
                content,
                delta,
            } => {
                if role.get().map(String::as_str) != Some("assistant") {
                    return Vec::new();
                }
                let Some(content) = content.into_inner() else {
                    return unknown();
                };
                let text = match (delta.into_inner().unwrap_or(false), answer) {
                    (true, Some(mut so_far)) => {
                        so_far.push_str(&content);
                        so_far
                    }
                    _ => content,
                };
                self.answer = Some(text.clone());
                vec![Event::Text { text }]
            }
            Payload::ToolUse {
                tool_name,
                tool_id,
                parameters,
            } => {
                let name = tool_name.into_inner().unwrap_or_else(|| "?".to_owned());
                let title = parameters.as_ref().and_then(tool_title);
                if let Some(id) = tool_id.into_inner() {
                    self.tools.insert(id, (name.clone(), title.clone()));
                }
                vec![Event::ToolStarted { name, title }]
            }
            Payload::ToolResult {
                tool_id,
                status,
                output,
                error,
            } => {
                let id = tool_id.into_inner().unwrap_or_default();
                let (name, title) = self
                    .tools
                    .remove(&id)
                    .unwrap_or_else(|| (name_from_id(&id), None));
                let failed =
                    status.get().is_some_and(|status| status != "success") || error.get().is_some();
                let error = error.into_inner();
                let refused = error.as_ref().is_some_and(is_refusal);
                let error = failed.then(|| {
                    error
                        .and_then(|error| error.message.into_inner())
                        .or(output.into_inner())
                        .unwrap_or_else(|| "failed".to_owned())
                });
                if let Some(message) = error.as_deref().filter(|_| refused) {
                    return vec![Event::PermissionRejected {
                        tool: name,
                        message: first_line(message),
                    }];
                }
                vec![Event::Tool {
                    name,
                    status: if failed {
                        ToolStatus::Error
                    } else {
                        ToolStatus::Completed
                    },
                    title,
                    error,
                }]
            }
            Payload::Error { severity, message } => {
                if severity.get().is_some_and(|severity| severity == "warning") {
                    return Vec::new();
                }
                let message = message.into_inner().unwrap_or_default();
                vec![api_error(&message).unwrap_or(Event::Error {
                    name: "Error".to_owned(),
                    message,
                    status_code: None,
                    retryable: None,
                })]
            }
            Payload::Result {
                status,
                error,
                stats,
            } => {
                let status = status.into_inner().unwrap_or_default();
                if status == SUCCESS {
                    return vec![
                        Event::StepFinished {
                            reason: Some(SUCCESS.to_owned()),
                            usage: run_usage(stats.into_inner().unwrap_or_default()),
                        },
                        Event::Ended,
                    ];
                }
                vec![result_error(&status, error.into_inner()), Event::Ended]
            }
            Payload::Other => unknown(),
        }
    }
}

/// The run's totals as ganger counts them: input without the cached part.
fn run_usage(stats: Stats) -> Usage {
    let count = |field: Lenient<u64>| field.into_inner().unwrap_or(0);
    let cached = count(stats.cached);
    Usage {
        input: count(stats.input_tokens).saturating_sub(cached),
        output: count(stats.output_tokens),
        reasoning: 0,
        cache_read: cached,
        cache_write: 0,
        cost_usd: None,
        mode: UsageMode::RoundTotal,
    }
}

/// Gemini's error type when a policy refused a call (plan mode, `tools.exclude` rules).
const POLICY_VIOLATION: &str = "policy_violation";

/// How Gemini's tool error starts when a path is outside the workspace.
const OUTSIDE_WORKSPACE: &str = "Path not in workspace";

/// The longest refusal message kept, in characters.
const REFUSAL_CHARS: usize = 300;

/// Whether a tool's error is Gemini's guard refusing the call rather than the tool failing.
fn is_refusal(error: &ErrorBody) -> bool {
    error
        .kind
        .get()
        .is_some_and(|kind| kind == POLICY_VIOLATION)
        || error
            .message
            .get()
            .is_some_and(|message| outside_workspace(message))
}

/// Whether a failed call's message is Gemini refusing a path outside its workspace.
pub(crate) fn outside_workspace(message: &str) -> bool {
    message.trim_start().starts_with(OUTSIDE_WORKSPACE)
}

/// The first line of a message, clipped.
fn first_line(message: &str) -> String {
    let line = message.trim().lines().next().unwrap_or_default();
    line.chars().take(REFUSAL_CHARS).collect()
}

/// The error of a `result` that is not a success.
fn result_error(status: &str, error: Option<ErrorBody>) -> Event {
    let error = error.unwrap_or_default();
    let kind = error.kind.into_inner();
    let message = error.message.into_inner().filter(|m| !m.is_empty());
    match message {
        Some(message) => api_error(&message).unwrap_or(Event::Error {
            name: kind.unwrap_or_else(|| "Error".to_owned()),
            message,
            status_code: None,
            retryable: None,
        }),
        None => Event::Error {
            name: kind.unwrap_or_else(|| "Error".to_owned()),
            message: format!("Gemini ended the run with status {status:?}"),
            status_code: None,
            retryable: None,
        },
    }
}

/// Gemini's `[API Error: {"error":{"code":401,"message":"…","status":"UNAUTHENTICATED"}}]`:
/// the API's own message and status. `None` when the text is not of that shape.
pub fn api_error(text: &str) -> Option<Event> {
    let after = text.trim().strip_prefix("[API Error:")?.trim();
    let inner = after.strip_suffix(']').unwrap_or(after).trim();
    let parsed = serde_json::from_str::<Value>(inner).ok();
    let body = parsed.as_ref().and_then(|value| value.get("error"));
    let status_code = body
        .and_then(|body| body.get("code"))
        .and_then(Value::as_u64)
        .or_else(|| code_in_text(inner))
        .and_then(|code| u16::try_from(code).ok());
    let message = match body
        .and_then(|body| body.get("message"))
        .and_then(Value::as_str)
    {
        Some(message) => match body.and_then(|b| b.get("status")).and_then(Value::as_str) {
            Some(status) => format!("{message} ({status})"),
            None => message.to_owned(),
        },
        None => inner.to_owned(),
    };
    Some(Event::Error {
        name: "APIError".to_owned(),
        message,
        status_code,
        retryable: None,
    })
}

/// The number after `"code":` in a text that did not parse as JSON.
fn code_in_text(text: &str) -> Option<u64> {
    let rest = &text[text.find("\"code\":")? + 7..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A short title of a tool call from its parameters: the command, the path, the pattern...
fn tool_title(parameters: &Value) -> Option<String> {
    const KEYS: [&str; 9] = [
        "command",
        "file_path",
        "absolute_path",
        "path",
        "dir_path",
        "pattern",
        "url",
        "query",
        "description",
    ];
    KEYS.iter()
        .find_map(|key| parameters.get(key)?.as_str())
        .map(str::to_owned)
}

/// The tool of a call id nobody announced: Gemini's ids start with the tool's name
/// (`write_file__write_file_1796004269408_0`).
fn name_from_id(id: &str) -> String {
    match id.split_once("__") {
        Some((name, _)) if !name.is_empty() => name.to_owned(),
        _ => "?".to_owned(),
    }
}
