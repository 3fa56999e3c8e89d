//! The stream-json lines Claude Code (2.1.197 and 2.1.332) prints with `-p --output-format
//! stream-json --verbose`, and Qwen Code (0.15.10 and 0.24.4) with `--output-format
//! stream-json`, as plain serde types.
//!
//! One JSON object per line:
//!
//! ```text
//! {"type":"system","subtype":"init","session_id":"0d54…","model":"claude-fake","permissionMode":"acceptEdits",…}
//! {"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"error_status":401,"error":"authentication_failed",…}
//! {"type":"assistant","message":{"model":"claude-fake","content":[{"type":"tool_use","id":"toolu_44f0…","name":"Write","input":{"file_path":"…"}}]},"session_id":"0d54…"}
//! {"type":"user","message":{"content":[{"tool_use_id":"toolu_44f0…","type":"tool_result","content":"File created…","is_error":false}]},…}
//! {"type":"result","subtype":"success","is_error":false,"api_error_status":null,"result":"Done.","stop_reason":"end_turn","total_cost_usd":0.01155,"usage":{"input_tokens":2060,"output_tokens":50,…},…}
//! ```
//!
//! Each content block of one API message comes on its own `assistant` line. Qwen prints the same
//! shapes without `api_error_status`, `stop_reason` and `total_cost_usd`.
//!
//! Newer releases add (docs/agents/claude-measured.md, qwen-measured.md):
//!
//! ```text
//! {"type":"system","subtype":"permission_denied","tool_name":"Write","tool_use_id":"call_…","decision_reason_type":"workingDir","decision_reason":"Path is outside allowed working directories","message":"Claude requested permissions to write to …, but you haven't granted it yet.",…}   (Claude Code 2.1.332)
//! {"type":"result","subtype":"error_during_execution","is_error":true,…,"error":{"message":"[API Error: 401 …]"}}   (Qwen Code 0.24.4, exit 1)
//! {"type":"stream_event",…,"event":{"type":"goal_state",…}}   (Qwen Code 0.24.4, without --include-partial-messages)
//! ```
//!
//! Both versions list the calls a permission refused in the result's `permission_denials`.
//! Claude Code 2.1.332's `total_cost_usd` (and `modelUsage`) became the session's running
//! totals, and its `result` adds the run's own use per model:
//!
//! ```text
//! {"type":"result",…,"total_cost_usd":0.066712,"usage":{"input_tokens":8170,"output_tokens":44,…},"model_usage_since_last_result":{"claude-fake":{"inputTokens":8170,"outputTokens":44,"costUSD":0.03356,…}}}   (a resumed round)
//! ```
//!
//! Fields are [`Lenient`]: one of an unexpected type reads as absent. Content lists stay
//! `serde_json::Value`s and are read block by block in `normalize.rs`, so one odd block never
//! hides the others.

use crate::opencode::Lenient;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The fields every line carries, whatever its type.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Envelope {
    /// The line's type (`system`, `assistant`, `user`, `result`, ...). A line without a string
    /// `type` is not an event at all.
    #[serde(rename = "type")]
    pub kind: Lenient<String>,
    /// The session the run belongs to: `--resume <id>` continues it.
    pub session_id: Lenient<String>,
}

/// What a line says, by its `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum Payload {
    /// A notice from the CLI itself: `init` (the session, tools, model), `api_retry`,
    /// `status`, ...
    #[serde(rename = "system")]
    System(SystemLine),
    /// One content block of a message from the model (or, with model `<synthetic>`, an error
    /// Claude Code wrote in the model's place).
    #[serde(rename = "assistant")]
    Assistant {
        #[serde(default)]
        message: Lenient<Message>,
    },
    /// Tool results going back to the model.
    #[serde(rename = "user")]
    User {
        #[serde(default)]
        message: Lenient<Message>,
    },
    /// The run's last line: its outcome, answer and usage.
    #[serde(rename = "result")]
    Result(ResultLine),
    /// A raw model API event (`--include-partial-messages` only; ganger does not ask for them).
    #[serde(rename = "stream_event")]
    StreamEvent,
    /// A type this adapter does not know.
    #[serde(other)]
    Other,
}

/// A `system` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SystemLine {
    /// `init`, `api_retry`, `status`, ...
    pub subtype: Lenient<String>,
    /// The session (every line carries it; `init` is the one that names it).
    pub session_id: Lenient<String>,
    /// Which retry this is (`api_retry`).
    pub attempt: Lenient<u64>,
    /// How many retries the CLI allows (`api_retry`; `CLAUDE_CODE_MAX_RETRIES`).
    pub max_retries: Lenient<u64>,
    /// The HTTP status of the failed attempt; `null` when no answer came (`api_retry`).
    pub error_status: Lenient<u16>,
    /// The failure's class: `authentication_failed`, `server_error`, `unknown`, ...
    pub error: Lenient<String>,
    /// The tool a permission refused (`permission_denied`).
    pub tool_name: Lenient<String>,
    /// The refused call (`permission_denied`).
    pub tool_use_id: Lenient<String>,
    /// Why it was refused, for people: `Path is outside allowed working directories`
    /// (`permission_denied`; absent when the mode refused it).
    pub decision_reason: Lenient<String>,
    /// What the model was told (`permission_denied`).
    pub message: Lenient<String>,
}

/// The `message` of an `assistant` or `user` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Message {
    /// The model that wrote it; `<synthetic>` for an error Claude Code wrote itself.
    pub model: Lenient<String>,
    /// The content blocks (a list of [`ContentBlock`]s), or a plain string.
    pub content: Option<Value>,
}

/// One block of a message's content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum ContentBlock {
    /// Text the model wrote.
    #[serde(rename = "text")]
    Text {
        #[serde(default)]
        text: Lenient<String>,
    },
    /// The model calls a tool.
    #[serde(rename = "tool_use")]
    ToolUse {
        /// The call's id (`toolu_…`, `call_…`), which its result names.
        #[serde(default)]
        id: Lenient<String>,
        /// The tool: `Write`, `Bash` (Claude); `write_file`, `run_shell_command` (Qwen).
        #[serde(default)]
        name: Lenient<String>,
        /// The call's arguments (`file_path`, `command`, ...).
        #[serde(default)]
        input: Option<Value>,
    },
    /// A tool's result, sent back to the model.
    #[serde(rename = "tool_result")]
    ToolResult {
        /// The call it answers.
        #[serde(default)]
        tool_use_id: Lenient<String>,
        /// Whether the call failed (or a permission refused it).
        #[serde(default)]
        is_error: Lenient<bool>,
        /// What the tool returned: a string or a list of text blocks.
        #[serde(default)]
        content: Option<Value>,
    },
    /// Thinking, images and anything newer.
    #[serde(other)]
    Other,
}

/// A `result` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ResultLine {
    /// `success` (also on API errors!), `error_during_execution`, `error_max_turns`, ...
    pub subtype: Lenient<String>,
    /// Whether the run failed. Qwen prints `false` even after an API error.
    pub is_error: Lenient<bool>,
    /// The HTTP status of the API error that ended the run (Claude only).
    pub api_error_status: Lenient<u16>,
    /// The answer, or the error's text.
    pub result: Lenient<String>,
    /// What went wrong, for results without a `result` text (`error_during_execution`).
    pub errors: Option<Value>,
    /// The model's last stop reason (`end_turn`; Claude only).
    pub stop_reason: Lenient<String>,
    /// Claude's estimate of the cost in US dollars: of this run in 2.1.197, of the **whole
    /// session so far** in 2.1.332 (also after a cold `--resume`, and a fork carries its
    /// parent's); the run's own is then in `model_usage_since_last_result`.
    pub total_cost_usd: Lenient<f64>,
    /// What each model used since the previous `result` (Claude Code 2.1.332; absent in
    /// 2.1.197): `{"claude-fake":{"inputTokens":8170,"outputTokens":44,"costUSD":0.03356,…}}`,
    /// `{}` when no request was answered. In a cold run, this run's own use.
    pub model_usage_since_last_result: Lenient<BTreeMap<String, Lenient<ModelUsage>>>,
    /// The run's tokens (Claude: this run; Qwen: the whole session so far).
    pub usage: Lenient<ResultUsage>,
    /// The calls a permission refused: `[{"tool_name":…,"tool_use_id":…,"tool_input":{…}}]`.
    pub permission_denials: Option<Value>,
    /// The error that ended the run, `{"message": …}` (Qwen Code 0.24, with no `result`).
    pub error: Option<Value>,
}

/// One entry of a result's `permission_denials`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Denial {
    /// The tool refused.
    pub tool_name: Lenient<String>,
    /// The refused call.
    pub tool_use_id: Lenient<String>,
    /// The call's arguments.
    pub tool_input: Option<Value>,
}

/// One model's entry in a result's `model_usage_since_last_result` (or `modelUsage`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelUsage {
    /// Claude's estimate of what the model's requests cost, in US dollars.
    #[serde(rename = "costUSD")]
    pub cost_usd: Lenient<f64>,
}

/// The `usage` of a `result` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ResultUsage {
    /// Input tokens, cache reads and writes excluded.
    pub input_tokens: Lenient<u64>,
    /// Output tokens.
    pub output_tokens: Lenient<u64>,
    /// Tokens read from the prompt cache.
    pub cache_read_input_tokens: Lenient<u64>,
    /// Tokens written to the prompt cache.
    pub cache_creation_input_tokens: Lenient<u64>,
}
