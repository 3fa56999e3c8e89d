//! Gemini CLI's own `--output-format stream-json` lines (version 0.61.0), as plain serde types.
//!
//! ```text
//! {"type":"init","timestamp":"…","session_id":"8bb81ce9-…","model":"gemini-fake"}
//! {"type":"message","timestamp":"…","role":"user","content":"Create the round file"}
//! {"type":"tool_use","timestamp":"…","tool_name":"write_file","tool_id":"write_file__write_file_1796004269408_0","parameters":{"file_path":"…","content":"…"}}
//! {"type":"tool_result","timestamp":"…","tool_id":"write_file__…","status":"success","output":"…"}
//! {"type":"message","timestamp":"…","role":"assistant","content":"Done round 1.","delta":true}
//! {"type":"error","timestamp":"…","severity":"warning","message":"Loop detected, stopping execution"}
//! {"type":"result","timestamp":"…","status":"success","stats":{"total_tokens":2080,"input_tokens":2040,"output_tokens":40,"cached":0,…}}
//! {"type":"result","timestamp":"…","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":401,…}}]"},"stats":{…}}
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
    /// The run began: the session (`--resume` takes its id) and the model.
    #[serde(rename = "init")]
    Init {
        #[serde(default)]
        session_id: Lenient<String>,
        #[serde(default)]
        model: Lenient<String>,
    },
    /// A message: the user's prompt, or (in pieces, `delta: true`) the assistant's answer.
    #[serde(rename = "message")]
    Message {
        #[serde(default)]
        role: Lenient<String>,
        #[serde(default)]
        content: Lenient<String>,
        #[serde(default)]
        delta: Lenient<bool>,
    },
    /// The model called a tool.
    #[serde(rename = "tool_use")]
    ToolUse {
        #[serde(default)]
        tool_name: Lenient<String>,
        #[serde(default)]
        tool_id: Lenient<String>,
        #[serde(default)]
        parameters: Option<Value>,
    },
    /// A tool call ended, named by its id alone.
    #[serde(rename = "tool_result")]
    ToolResult {
        #[serde(default)]
        tool_id: Lenient<String>,
        /// `success` or `error`.
        #[serde(default)]
        status: Lenient<String>,
        #[serde(default)]
        output: Lenient<String>,
        #[serde(default)]
        error: Lenient<ErrorBody>,
    },
    /// A problem during the run: `severity` `warning` (a detected loop, a blocked agent, a
    /// retryable API notice) or `error` (an invalid model answer, too many turns, an exhausted
    /// quota).
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        severity: Lenient<String>,
        #[serde(default)]
        message: Lenient<String>,
    },
    /// The run's last line: `success` with the run's token totals, or `error`.
    #[serde(rename = "result")]
    Result {
        #[serde(default)]
        status: Lenient<String>,
        #[serde(default)]
        error: Lenient<ErrorBody>,
        #[serde(default)]
        stats: Lenient<Stats>,
    },
    /// A type this adapter does not know.
    #[serde(other)]
    Other,
}

/// An error object.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    /// Gemini's error class (`unknown` for API errors, `invalid_tool_params`, ...).
    #[serde(rename = "type")]
    pub kind: Lenient<String>,
    /// The message; API errors read `[API Error: {"error":{"code":401,…}}]`.
    pub message: Lenient<String>,
}

/// The token totals of one run (one invocation, not the session).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Stats {
    pub total_tokens: Lenient<u64>,
    /// Prompt tokens, cached ones included.
    pub input_tokens: Lenient<u64>,
    pub output_tokens: Lenient<u64>,
    /// Prompt tokens read from the cache.
    pub cached: Lenient<u64>,
    pub duration_ms: Lenient<u64>,
    pub tool_calls: Lenient<u64>,
}
