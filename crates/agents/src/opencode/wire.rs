//! OpenCode's own `run --format json` lines (version 1.18.33), as plain serde types.
//!
//! One JSON object per line, printed as the run goes:
//!
//! ```text
//! {"type":"step_start","timestamp":1796003400067,"sessionID":"ses_…","part":{"type":"step-start",…}}
//! {"type":"tool_use","timestamp":…,"sessionID":"ses_…","part":{"type":"tool","tool":"write","callID":"call_…","state":{"status":"completed","input":{…},"output":"Wrote file successfully.","title":"round2.txt",…}}}
//! {"type":"step_finish","timestamp":…,"sessionID":"ses_…","part":{"type":"step-finish","reason":"tool-calls","tokens":{"total":1080,"input":1060,"output":20,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.00348}}
//! {"type":"text","timestamp":…,"sessionID":"ses_…","part":{"type":"text","text":"Done round 2.",…}}
//! {"type":"error","timestamp":…,"sessionID":"ses_…","error":{"name":"APIError","data":{"message":"…","statusCode":500,"isRetryable":true,…}}}
//! ```
//!
//! Every field is [`Lenient`]: a field of an unexpected type reads as absent, and fields these
//! types do not name are ignored, so a line of a known type always reads. What a missing field
//! means is decided in `normalize.rs`, not here.

use crate::opencode::lenient::Lenient;
use serde::Deserialize;
use serde_json::Value;

/// The fields every line carries, whatever its type.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Envelope {
    /// The line's event type (`step_start`, `tool_use`, ...). A line without a string `type`
    /// is not an event at all.
    #[serde(rename = "type")]
    pub kind: Lenient<String>,
    /// When OpenCode printed the line, in milliseconds since the Unix epoch.
    pub timestamp: Lenient<u64>,
    /// The session the run belongs to: `opencode run -s <id>` continues it.
    #[serde(rename = "sessionID")]
    pub session_id: Lenient<String>,
}

/// What a line says, by its `type`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum Payload {
    /// A model step began: one request to the model and what came of it.
    #[serde(rename = "step_start")]
    StepStart {
        /// The step-start part.
        #[serde(default)]
        part: Lenient<StepStartPart>,
    },
    /// A model step ended, with the model's finish reason, tokens and cost. The run's last step
    /// ends with reason `stop`; a step that called tools ends with `tool-calls`.
    #[serde(rename = "step_finish")]
    StepFinish {
        /// The step-finish part.
        #[serde(default)]
        part: Lenient<StepFinishPart>,
    },
    /// A finished text part the assistant wrote (no deltas in `run --format json`).
    #[serde(rename = "text")]
    Text {
        /// The text part.
        #[serde(default)]
        part: Lenient<TextPart>,
    },
    /// A finished reasoning part (printed only with `run --thinking`).
    #[serde(rename = "reasoning")]
    Reasoning {
        /// The reasoning part; its `text` is the model's reasoning.
        #[serde(default)]
        part: Lenient<TextPart>,
    },
    /// A tool call that ended: OpenCode prints it once, when its state is `completed` or
    /// `error`.
    #[serde(rename = "tool_use")]
    ToolUse {
        /// The tool part.
        #[serde(default)]
        part: Lenient<ToolPart>,
    },
    /// The session failed (the model's API refused, the model is unknown, ...). OpenCode exits
    /// 1 after it.
    #[serde(rename = "error")]
    Error {
        /// What went wrong.
        #[serde(default)]
        error: Lenient<ErrorField>,
    },
    /// A type this adapter does not know.
    #[serde(other)]
    Other,
}

/// The part of a `step_start` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StepStartPart {
    /// The part's id (`prt_…`).
    pub id: Lenient<String>,
    /// The assistant message the step belongs to (`msg_…`).
    #[serde(rename = "messageID")]
    pub message_id: Lenient<String>,
    /// The worktree snapshot (a git tree hash) taken when the step began.
    pub snapshot: Lenient<String>,
}

/// The part of a `step_finish` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StepFinishPart {
    /// The part's id (`prt_…`).
    pub id: Lenient<String>,
    /// The assistant message the step belongs to (`msg_…`).
    #[serde(rename = "messageID")]
    pub message_id: Lenient<String>,
    /// The model's finish reason: `stop`, `tool-calls`, `length`, `unknown`, ...
    pub reason: Lenient<String>,
    /// The worktree snapshot taken when the step ended.
    pub snapshot: Lenient<String>,
    /// The tokens this step used.
    pub tokens: Lenient<Tokens>,
    /// What this step cost in US dollars, from the prices in the model's config (0 without).
    pub cost: Lenient<f64>,
}

/// The tokens of one step.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Tokens {
    /// All tokens of the step (absent in older versions).
    pub total: Lenient<u64>,
    /// Input (prompt) tokens, cache reads excluded.
    pub input: Lenient<u64>,
    /// Output (completion) tokens.
    pub output: Lenient<u64>,
    /// Reasoning tokens.
    pub reasoning: Lenient<u64>,
    /// Prompt-cache tokens.
    pub cache: Lenient<CacheTokens>,
}

/// The prompt-cache tokens of one step.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CacheTokens {
    /// Tokens read from the provider's prompt cache.
    pub read: Lenient<u64>,
    /// Tokens written to the provider's prompt cache.
    pub write: Lenient<u64>,
}

/// The part of a `text` or `reasoning` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TextPart {
    /// The part's id (`prt_…`).
    pub id: Lenient<String>,
    /// The assistant message the part belongs to (`msg_…`).
    #[serde(rename = "messageID")]
    pub message_id: Lenient<String>,
    /// The whole text of the part.
    pub text: Lenient<String>,
    /// When the part was written.
    pub time: Lenient<PartTime>,
}

/// When a part (or a tool call) started and ended, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PartTime {
    /// The start.
    pub start: Lenient<u64>,
    /// The end.
    pub end: Lenient<u64>,
}

/// The part of a `tool_use` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ToolPart {
    /// The part's id (`prt_…`).
    pub id: Lenient<String>,
    /// The assistant message that made the call (`msg_…`).
    #[serde(rename = "messageID")]
    pub message_id: Lenient<String>,
    /// The model's id for the call (`call_…`).
    #[serde(rename = "callID")]
    pub call_id: Lenient<String>,
    /// The tool's name: `write`, `edit`, `bash`, `read`, ...
    pub tool: Lenient<String>,
    /// How the call went.
    pub state: Lenient<ToolState>,
}

/// The state of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ToolState {
    /// Where the call stands.
    pub status: Lenient<CallStatus>,
    /// The call's arguments, as the tool defines them (`filePath`, `command`, ...).
    pub input: Option<Value>,
    /// What the tool returned to the model (`completed` calls).
    pub output: Lenient<String>,
    /// A short human title of the call: a path, a command.
    pub title: Lenient<String>,
    /// Why the call failed (`error` calls). A permission set to `ask` is auto-rejected in
    /// `opencode run` with "The user rejected permission to use this specific tool call."
    pub error: Lenient<String>,
    /// Tool-specific details: the file path, a bash exit code, diagnostics, ...
    pub metadata: Option<Value>,
    /// When the call started and ended.
    pub time: Lenient<PartTime>,
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallStatus {
    /// The model asked for the call; it has not started (seen in `serve` events only).
    Pending,
    /// The call is running (seen in `serve` events only).
    Running,
    /// The call finished.
    Completed,
    /// The call failed, or a permission refused it.
    Error,
}

/// The `error` of an `error` line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ErrorField {
    /// An error object, in either of its shapes (see [`ErrorBody`]).
    Named(ErrorBody),
    /// A bare message.
    Text(String),
}

/// An error object. OpenCode 1.18.33 prints `{"name":"APIError","data":{"message":…}}`; older
/// launchers (and the seed's fake one) print `{"type":"provider.no-route","message":…}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    /// The error's class: `APIError`, `UnknownError`, `ProviderAuthError`, ...
    pub name: Lenient<String>,
    /// The class's details.
    pub data: Lenient<ErrorData>,
    /// The error's kind in the older shape, such as `provider.no-route`.
    #[serde(rename = "type")]
    pub kind: Lenient<String>,
    /// The message in the older shape.
    pub message: Lenient<String>,
}

/// The details of an error.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ErrorData {
    /// What went wrong, as OpenCode words it.
    pub message: Lenient<String>,
    /// The HTTP status of the model API's answer (`APIError`).
    #[serde(rename = "statusCode")]
    pub status_code: Lenient<u16>,
    /// Whether OpenCode considered the error retryable (it retried already before printing).
    #[serde(rename = "isRetryable")]
    pub is_retryable: Lenient<bool>,
    /// The body of the model API's answer (`APIError`).
    #[serde(rename = "responseBody")]
    pub response_body: Lenient<String>,
    /// The provider concerned (`ProviderAuthError`).
    #[serde(rename = "providerID")]
    pub provider_id: Lenient<String>,
    /// A reference to the full error in OpenCode's log (`UnknownError`).
    #[serde(rename = "ref")]
    pub reference: Lenient<String>,
    /// More details, such as the URL that was called.
    pub metadata: Option<Value>,
}
