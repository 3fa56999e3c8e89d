//! Codex's own `exec --json` lines (version 0.171.0), as plain serde types.
//!
//! One JSON object per line:
//!
//! ```text
//! {"type":"thread.started","thread_id":"01a22a2b-67b8-77a2-96ca-86d53b483964"}
//! {"type":"turn.started"}
//! {"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc …","exit_code":null,"status":"in_progress"}}
//! {"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[{"path":"…/round1.txt","kind":"add"}],"status":"completed"}}
//! {"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done round 1."}}
//! {"type":"turn.completed","usage":{"input_tokens":2100,"cached_input_tokens":400,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":10}}
//! {"type":"error","message":"Reconnecting... 1/5 (…)"}
//! {"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: …"}}
//! ```
//!
//! Fields are [`Lenient`]: one of an unexpected type reads as absent, and fields not named here
//! are ignored. What a missing field means is decided in `normalize.rs`.

use crate::opencode::Lenient;
use serde::Deserialize;
use serde_json::Value;

/// What a line says, by its `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum Payload {
    /// The thread (Codex's session) the run belongs to; `exec resume` re-emits the same id.
    #[serde(rename = "thread.started")]
    ThreadStarted {
        #[serde(default)]
        thread_id: Lenient<String>,
    },
    /// The turn (one prompt and all the model requests it takes) began.
    #[serde(rename = "turn.started")]
    TurnStarted {},
    /// The turn ended; `usage` covers the whole thread so far, not this turn alone.
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        #[serde(default)]
        usage: Lenient<ThreadUsage>,
    },
    /// The turn failed (the model's API refused, retries ran out, ...). Codex exits 1.
    #[serde(rename = "turn.failed")]
    TurnFailed {
        #[serde(default)]
        error: Lenient<ErrorMessage>,
    },
    /// An item (a tool call, a message) began.
    #[serde(rename = "item.started")]
    ItemStarted {
        #[serde(default)]
        item: Lenient<Item>,
    },
    /// An item changed while running (a to-do list ticked off).
    #[serde(rename = "item.updated")]
    ItemUpdated {
        #[serde(default)]
        item: Lenient<Item>,
    },
    /// An item ended.
    #[serde(rename = "item.completed")]
    ItemCompleted {
        #[serde(default)]
        item: Lenient<Item>,
    },
    /// A notice about the connection: `Reconnecting... 1/5 (…)` while Codex retries, then the
    /// final error's message just before `turn.failed`. With the server unreachable Codex prints
    /// `Reconnecting... waiting for network …` forever.
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        message: Lenient<String>,
    },
    /// A type this adapter does not know.
    #[serde(other)]
    Other,
}

/// The thread's running token totals.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ThreadUsage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: Lenient<u64>,
    /// Prompt tokens read from the provider's cache.
    pub cached_input_tokens: Lenient<u64>,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_input_tokens: Lenient<u64>,
    /// Output tokens, reasoning included.
    pub output_tokens: Lenient<u64>,
    /// Reasoning tokens.
    pub reasoning_output_tokens: Lenient<u64>,
}

/// An error object with a message.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ErrorMessage {
    pub message: Lenient<String>,
}

/// One item of a turn. Which fields are present depends on `type`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Item {
    /// The item's id within the turn (`item_0`).
    pub id: Lenient<String>,
    /// `agent_message`, `reasoning`, `command_execution`, `file_change`, `mcp_tool_call`,
    /// `web_search`, `todo_list`, `error`, ...
    #[serde(rename = "type")]
    pub kind: Lenient<String>,
    /// The text of an `agent_message` or `reasoning` item.
    pub text: Lenient<String>,
    /// The message of an `error` item (a notice, such as unknown model metadata).
    pub message: Lenient<String>,
    /// The command line of a `command_execution`.
    pub command: Lenient<String>,
    /// The exit code of a finished `command_execution` (`null` while it runs).
    pub exit_code: Lenient<i64>,
    /// `in_progress`, `completed` or `failed`.
    pub status: Lenient<String>,
    /// The files a `file_change` touched.
    pub changes: Option<Value>,
    /// The MCP server and tool of an `mcp_tool_call`.
    pub server: Lenient<String>,
    pub tool: Lenient<String>,
    /// The query of a `web_search`.
    pub query: Lenient<String>,
    /// Why an `mcp_tool_call` failed.
    pub error: Lenient<ErrorMessage>,
}
