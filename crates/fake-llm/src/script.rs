//! A script: the answers the fake model gives, turn by turn, and the builders tests use to
//! write one in Rust.
//!
//! A script is plain data; patterns are compiled and the rules checked by
//! [`Script::check`](crate::Script::check) (run by the TOML reader and by every server start),
//! so a builder chain never fails halfway.

use crate::fault::{Fault, FaultSpec};

/// The answer to requests that offer no tools, when a script does not set its own.
pub const DEFAULT_ANSWER: &str = "Scripted session title";

/// What a turn answers.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnKind {
    /// A text answer; `{{history}}` and the other templates are filled in.
    Text {
        /// The text template.
        text: String,
    },
    /// One call of a tool the agent offers.
    Tool {
        /// The tool's name exactly as the agent offers it (`write`, `edit`, `bash`, ...).
        name: String,
        /// The arguments: a JSON object, or a string for a custom (freeform) tool whose input
        /// is raw text, such as Codex's `apply_patch`.
        arguments: serde_json::Value,
    },
    /// A fault instead of an answer.
    Fault {
        /// What goes wrong.
        fault: Fault,
    },
}

/// One scripted turn: an answer, and optionally the pattern of the prompt it waits for.
///
/// `times` and `retry_after_ms` only make sense on fault turns; [`Script::check`] refuses
/// them elsewhere, as the TOML reader does.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// A regular expression searched in the text of a new prompt; a turn with a pattern is
    /// only ever picked by a new prompt that matches it.
    pub when: Option<String>,
    /// What the turn answers.
    pub kind: TurnKind,
    /// For a fault: how many requests fault before the script goes on. `None` means every
    /// request from then on (a permanent fault, which must be the script's last turn).
    pub times: Option<u32>,
    /// For a 429 or 500 fault: send `retry-after-ms: N` and `retry-after: ceil(N/1000)`.
    pub retry_after_ms: Option<u64>,
}

impl Turn {
    fn of(kind: TurnKind) -> Self {
        Turn {
            when: None,
            kind,
            times: None,
            retry_after_ms: None,
        }
    }

    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Turn::of(TurnKind::Text { text: text.into() })
    }

    /// A tool call with JSON object arguments, or with a JSON string as the raw input of a
    /// custom tool (`json!("*** Begin Patch\n...")`).
    pub fn tool(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Turn::of(TurnKind::Tool {
            name: name.into(),
            arguments,
        })
    }

    /// A permanent fault (use [`Turn::times`] to make it pass).
    pub fn fault(fault: Fault) -> Self {
        Turn::of(TurnKind::Fault { fault })
    }

    /// Makes this turn wait for a new prompt matching `pattern` (a regular expression).
    pub fn when(mut self, pattern: impl Into<String>) -> Self {
        self.when = Some(pattern.into());
        self
    }

    /// For a fault turn: fault `times` requests, then go on to the next turn.
    pub fn times(mut self, times: u32) -> Self {
        self.times = Some(times);
        self
    }

    /// For a 429 or 500 fault turn: send `retry-after-ms` and `retry-after` headers.
    pub fn retry_after_ms(mut self, millis: u64) -> Self {
        self.retry_after_ms = Some(millis);
        self
    }
}

/// A whole script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The answer to requests that offer no tools (titles, summaries); templates allowed.
    pub default_answer: String,
    /// The turns, picked as the docs of [`crate::turn_picker`] describe.
    pub turns: Vec<Turn>,
    /// Start over at the first turn when the last one is used (the built-in script does).
    pub repeat: bool,
    /// A fault for every request that offers tools, whatever the turns say.
    pub fault_every_request: Option<FaultSpec>,
}

impl Default for Script {
    fn default() -> Self {
        Script::new()
    }
}

impl Script {
    /// An empty script: the default answer for side requests and nothing else.
    pub fn new() -> Self {
        Script {
            default_answer: DEFAULT_ANSWER.to_owned(),
            turns: Vec::new(),
            repeat: false,
            fault_every_request: None,
        }
    }

    /// Appends a turn.
    pub fn turn(mut self, turn: Turn) -> Self {
        self.turns.push(turn);
        self
    }

    /// Appends a text answer.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.turn(Turn::text(text))
    }

    /// Appends a tool call.
    pub fn tool(self, name: impl Into<String>, arguments: serde_json::Value) -> Self {
        self.turn(Turn::tool(name, arguments))
    }

    /// Appends a fault that happens `times` times, then the script goes on.
    pub fn fault_times(self, fault: Fault, times: u32) -> Self {
        self.turn(Turn::fault(fault).times(times))
    }

    /// Appends a permanent fault (it must be the last turn).
    pub fn fault(self, fault: Fault) -> Self {
        self.turn(Turn::fault(fault))
    }

    /// Sets the answer to requests that offer no tools.
    pub fn default_answer(mut self, text: impl Into<String>) -> Self {
        self.default_answer = text.into();
        self
    }

    /// Starts over at the first turn once the last one is used.
    pub fn repeat(mut self, repeat: bool) -> Self {
        self.repeat = repeat;
        self
    }

    /// Makes every request that offers tools fault (side requests still get the default).
    pub fn fault_every_request(mut self, spec: FaultSpec) -> Self {
        self.fault_every_request = Some(spec);
        self
    }
}
