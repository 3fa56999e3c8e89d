//! The full parse of one Codex line into ganger's events.
//!
//! - `thread.started` yields [`Event::Session`] (the thread id `exec resume` takes).
//! - `turn.started` yields [`Event::StepStarted`].
//! - `turn.completed` yields [`Event::StepFinished`] with the thread's running totals
//!   ([`UsageMode::SessionTotal`]: Codex's usage is cumulative over the thread) and
//!   [`Event::Ended`]. Codex reports no cost.
//! - `turn.failed` yields [`Event::Error`] (with the HTTP status when the message names one)
//!   and [`Event::Ended`].
//! - `item.started` of a tool call (a command, a patch, an MCP call, a web search) yields
//!   [`Event::ToolStarted`]; `item.completed` yields [`Event::Tool`] for those, and
//!   [`Event::Text`] for an `agent_message`. Reasoning, to-do lists and `item.updated` yield
//!   nothing beyond the count.
//! - An `error` *item* is a notice, not a failure (Codex prints one when it lacks metadata
//!   for the model and goes on with defaults): nothing beyond the count.
//! - A top-level `error` line is a connection notice (`Reconnecting... 1/5 …`) and yields
//!   [`Event::Retry`]: not progress, so a Codex that reconnects forever (it does when the server
//!   refuses connections) runs into the stall limit. The final error is in `turn.failed`.
//! - A line that is not a JSON object with a string `type` is malformed; any other type yields
//!   [`Event::Unknown`].

use crate::ParsedLine;
use crate::codex::wire::{Item, Payload, ThreadUsage};
use crate::stream::json_object;
use ganger_events::{Event, ToolStatus, Usage, UsageMode};
use serde::Deserialize;
use serde_json::Value;

/// The name ganger gives Codex's shell tool calls (`command_execution` items).
pub const SHELL_TOOL: &str = "shell";

/// The name ganger gives Codex's file edits (`file_change` items, made with `apply_patch`).
pub const PATCH_TOOL: &str = "apply_patch";

/// The finish reason ganger records for a completed turn (Codex gives none of its own).
pub const COMPLETED: &str = "completed";

/// Parses one line (without its terminator) into its type and events.
pub fn parse_line(line: &[u8]) -> ParsedLine {
    let Some(value) = json_object(line) else {
        return ParsedLine::malformed();
    };
    let Some(kind) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
        return ParsedLine::malformed();
    };
    let payload = Payload::deserialize(&value).unwrap_or(Payload::Other);
    let events = events_of(&kind, payload);
    ParsedLine {
        kind: Some(kind),
        events,
    }
}

fn events_of(kind: &str, payload: Payload) -> Vec<Event> {
    match payload {
        Payload::ThreadStarted { thread_id } => match thread_id.into_inner() {
            Some(id) => vec![Event::Session { id }],
            None => vec![Event::Unknown {
                kind: kind.to_owned(),
            }],
        },
        Payload::TurnStarted {} => vec![Event::StepStarted],
        Payload::TurnCompleted { usage } => vec![
            Event::StepFinished {
                reason: Some(COMPLETED.to_owned()),
                usage: thread_usage(usage.into_inner().unwrap_or_default()),
            },
            Event::Ended,
        ],
        Payload::TurnFailed { error } => {
            let message = error
                .into_inner()
                .and_then(|error| error.message.into_inner())
                .filter(|message| !message.is_empty())
                .unwrap_or_else(|| "the turn failed without a message".to_owned());
            vec![turn_failed(message), Event::Ended]
        }
        Payload::ItemStarted { item } => item
            .into_inner()
            .and_then(tool_started)
            .into_iter()
            .collect(),
        Payload::ItemUpdated { .. } => Vec::new(),
        Payload::ItemCompleted { item } => match item.into_inner() {
            Some(item) => item_completed(item).into_iter().collect(),
            None => vec![Event::Unknown {
                kind: kind.to_owned(),
            }],
        },
        Payload::Error { message } => vec![Event::Retry {
            message: message.into_inner().unwrap_or_default(),
        }],
        Payload::Other => vec![Event::Unknown {
            kind: kind.to_owned(),
        }],
    }
}

/// The thread's totals as ganger counts them: input without the cached part.
fn thread_usage(usage: ThreadUsage) -> Usage {
    let count = |field: crate::opencode::Lenient<u64>| field.into_inner().unwrap_or(0);
    let cached = count(usage.cached_input_tokens);
    Usage {
        input: count(usage.input_tokens).saturating_sub(cached),
        output: count(usage.output_tokens),
        reasoning: count(usage.reasoning_output_tokens),
        cache_read: cached,
        cache_write: count(usage.cache_write_input_tokens),
        cost_usd: None,
        mode: UsageMode::SessionTotal,
    }
}

/// The error of a failed turn, with the HTTP status Codex names in
/// `unexpected status 401 Unauthorized: …`.
fn turn_failed(message: String) -> Event {
    let status_code = http_status(&message);
    Event::Error {
        name: if status_code.is_some() {
            "APIError"
        } else {
            "TurnFailed"
        }
        .to_owned(),
        message,
        status_code,
        retryable: None,
    }
}

/// The status in Codex's `unexpected status NNN …` wording.
pub fn http_status(message: &str) -> Option<u16> {
    const MARK: &str = "unexpected status ";
    let rest = &message[message.find(MARK)? + MARK.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .ok()
        .filter(|code| (100..=599).contains(code))
}

/// The name ganger gives an item's tool, when the item is a tool call.
fn tool_name(item: &Item) -> Option<String> {
    Some(match item.kind.get()?.as_str() {
        "command_execution" => SHELL_TOOL.to_owned(),
        "file_change" => PATCH_TOOL.to_owned(),
        "mcp_tool_call" => match (item.server.get(), item.tool.get()) {
            (Some(server), Some(tool)) => format!("{server}.{tool}"),
            (None, Some(tool)) => tool.clone(),
            _ => "mcp".to_owned(),
        },
        "web_search" => "web_search".to_owned(),
        _ => return None,
    })
}

/// A short title of a tool item: the command, the changed paths, the query.
fn tool_title(item: &Item) -> Option<String> {
    match item.kind.get()?.as_str() {
        "command_execution" => item.command.get().cloned(),
        "file_change" => {
            let paths: Vec<&str> = item
                .changes
                .as_ref()?
                .as_array()?
                .iter()
                .filter_map(|change| change.get("path")?.as_str())
                .collect();
            (!paths.is_empty()).then(|| paths.join(", "))
        }
        "web_search" => item.query.get().cloned(),
        _ => None,
    }
}

fn tool_started(item: Item) -> Option<Event> {
    Some(Event::ToolStarted {
        name: tool_name(&item)?,
        title: tool_title(&item),
    })
}

fn item_completed(item: Item) -> Option<Event> {
    let kind = item.kind.get().cloned().unwrap_or_default();
    match kind.as_str() {
        "agent_message" => Some(match item.text.into_inner() {
            Some(text) => Event::Text { text },
            None => Event::Unknown {
                kind: "item.completed".to_owned(),
            },
        }),
        // Reasoning, plans and notices (an `error` item) are not the round's outcome.
        "reasoning" | "todo_list" | "error" => None,
        _ => match tool_name(&item) {
            Some(name) => Some(tool_ended(name, item)),
            None => Some(Event::Unknown {
                kind: format!("item.completed:{kind}"),
            }),
        },
    }
}

/// A finished tool item. A command that exited non-zero is an ordinary tool error (the model
/// sees it and goes on), as is a failed patch or MCP call.
fn tool_ended(name: String, item: Item) -> Event {
    let title = tool_title(&item);
    let failed_status = item.status.get().is_some_and(|status| status == "failed");
    let exit_code = item.exit_code.into_inner();
    let nonzero = exit_code.is_some_and(|code| code != 0);
    let error = item
        .error
        .into_inner()
        .and_then(|error| error.message.into_inner());
    let status = if failed_status || nonzero || error.is_some() {
        ToolStatus::Error
    } else {
        ToolStatus::Completed
    };
    let error = match (status, error, exit_code) {
        (ToolStatus::Error, Some(message), _) => Some(message),
        (ToolStatus::Error, None, Some(code)) => Some(format!("exited with code {code}")),
        (ToolStatus::Error, None, None) => Some("failed".to_owned()),
        _ => None,
    };
    Event::Tool {
        name,
        status,
        title,
        error,
    }
}
