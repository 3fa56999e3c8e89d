//! The normalized event model: what ganger understands of one line of an agent's stream,
//! whatever the agent. Each agent CLI keeps its own wire types in its adapter; adapters map
//! them here with pure functions.

use serde::{Deserialize, Serialize};

/// One thing an agent reported, in ganger's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The agent named its session (the id a later round resumes).
    Session { id: String },
    /// A model step began (one request to the model and what came of it).
    StepStarted,
    /// A model step ended, with the reason the model gave and what it used.
    StepFinished {
        /// The model's finish reason, such as `stop` or `tool-calls`.
        reason: Option<String>,
        /// Tokens and cost of this step (or totals, see [`UsageMode`]).
        usage: Usage,
    },
    /// Text the assistant wrote. Agents that stream deltas are normalized to whole parts.
    Text { text: String },
    /// A tool call began (agents that report calls as they start: Claude Code, Codex,
    /// Gemini CLI, Qwen Code). Progress, but not counted as a call until it ends.
    ToolStarted {
        /// The tool's name as the agent calls it.
        name: String,
        /// A short human title of the call (a path, a command), when the agent gives one.
        title: Option<String>,
    },
    /// A tool call ended. OpenCode reports a call only once it has finished.
    Tool {
        /// The tool's name as the agent calls it (`write`, `bash`, ...).
        name: String,
        /// How the call ended.
        status: ToolStatus,
        /// A short human title of the call (a path, a command), when the agent gives one.
        title: Option<String>,
        /// The error text of a failed call.
        error: Option<String>,
    },
    /// A tool call the agent's permission settings refused without asking anyone: OpenCode's
    /// `ask` in a headless run or a `deny` (the agent stops there), Claude Code's and Qwen
    /// Code's refusals (the model is told and carries on). The round failed either way: the
    /// agent was kept from something it judged part of the work.
    PermissionRejected { tool: String, message: String },
    /// A tool call ganger allowed when a warm agent asked (a refusal is
    /// [`Event::PermissionRejected`]): the tool and the rule that decided.
    PermissionGranted { tool: String, rule: String },
    /// An error the agent reported: the round failed.
    Error {
        /// The error's class as the agent names it (`APIError`, `UnknownError`, ...); empty for
        /// an error of ganger's own (a warm host's), which has no class to name.
        name: String,
        /// The message, as readable as the agent made it.
        message: String,
        /// The HTTP status of the model's answer, when the agent reports it.
        status_code: Option<u16>,
        /// Whether the agent considered the error retryable.
        retryable: Option<bool>,
    },
    /// A notice that the agent is retrying a failed request. Not progress: a round that only
    /// retries is stalled.
    Retry { message: String },
    /// The agent's last event of the round (Claude's `result`, Codex's `turn.completed` or
    /// `turn.failed`, Gemini's and Qwen's `result`): the round's work is over even if the
    /// process lingers.
    Ended,
    /// Tokens spent so far, told while the turn runs by an agent whose steps say none (OpenCode
    /// kept warm: its warm host reads them from OpenCode's records), so that a budget can stop
    /// the round before the turn ends. Always running totals of the round.
    Usage { usage: Usage },
    /// What the model gateway counted of a warm turn (its warm host's gateway outlives the
    /// turn, so it tells the turn's share at the turn's end).
    Gateway { tally: crate::GatewayTally },
    /// A well-formed line of a kind this adapter does not know. Counted and kept, never fatal.
    Unknown { kind: String },
}

impl Event {
    /// Whether this event shows the agent making progress (for the stall limit).
    pub fn is_progress(&self) -> bool {
        !matches!(self, Event::Retry { .. } | Event::Usage { .. })
    }

    /// Rewrites every text of the event that came from the agent with `rewrite`, which returns
    /// the new text or `None` to keep it (ganger's redactor goes through here).
    pub fn rewrite_texts(&mut self, mut rewrite: impl FnMut(&str) -> Option<String>) {
        let mut one = |text: &mut String| {
            if let Some(new) = rewrite(text) {
                *text = new;
            }
        };
        match self {
            Event::Session { id } => one(id),
            Event::StepStarted | Event::Ended | Event::Usage { .. } | Event::Gateway { .. } => {}
            Event::StepFinished { reason, .. } => reason.iter_mut().for_each(one),
            Event::Text { text } => one(text),
            Event::ToolStarted { name, title } => {
                one(name);
                title.iter_mut().for_each(one);
            }
            Event::Tool {
                name, title, error, ..
            } => {
                one(name);
                title.iter_mut().chain(error).for_each(one);
            }
            Event::PermissionRejected { tool, message } => {
                one(tool);
                one(message);
            }
            Event::PermissionGranted { tool, rule } => {
                one(tool);
                one(rule);
            }
            Event::Error { name, message, .. } => {
                one(name);
                one(message);
            }
            Event::Retry { message } => one(message),
            Event::Unknown { kind } => one(kind),
        }
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The call finished.
    Completed,
    /// The call failed (an ordinary tool error is not a round failure).
    Error,
    /// The call had not finished when the agent reported it.
    Running,
}

/// Tokens and cost reported with a step or a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens.
    pub input: u64,
    /// Output (completion) tokens.
    pub output: u64,
    /// Reasoning tokens, where the agent reports them apart from output.
    pub reasoning: u64,
    /// Tokens read from the provider's prompt cache.
    pub cache_read: u64,
    /// Tokens written to the provider's prompt cache.
    pub cache_write: u64,
    /// Cost in US dollars as the agent computed it; `None` when the agent reports no cost.
    pub cost_usd: Option<f64>,
    /// Whether these figures are for this step alone or running totals.
    pub mode: UsageMode,
}

/// Whether a [`Usage`] is a delta or a running total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageMode {
    /// Figures for this step only; the summary adds them up (OpenCode).
    #[default]
    Delta,
    /// Totals for the round so far; the summary keeps the last one.
    RoundTotal,
    /// Totals for the whole session, earlier rounds included (Codex's thread usage, Qwen's
    /// session usage); the summary keeps the last one, and the round's own figures are its
    /// difference from the previous round's session totals.
    SessionTotal,
}
