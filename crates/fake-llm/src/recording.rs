//! What the server remembers of every request, so tests (through [`crate::FakeLlm`]) and
//! people (through `GET /_fake/requests`) can check what an agent sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{Answer, Conversation, TokenUsage};
use crate::fault::Fault;
use crate::turn_picker::AnsweredBy;

/// One request as it arrived, and how it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// Its sequence number on this server, from 0.
    pub index: usize,
    /// The HTTP method (`POST`).
    pub method: String,
    /// The path without the query (`/v1/chat/completions`).
    pub path: String,
    /// The query string without `?`, if any.
    pub query: Option<String>,
    /// Every header as `[name, value]`, in arrival order, names in lower case; values that
    /// are not UTF-8 are converted lossily.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `None` when it is empty or not JSON.
    pub body: Option<Value>,
    /// The body as text when it is not empty and not JSON.
    pub body_text: Option<String>,
    /// Arrival time, milliseconds since the Unix epoch.
    pub received_at_ms: u64,
    /// Arrival time, milliseconds since the server started.
    pub elapsed_ms: u64,
    /// The protocol of a model request (`openai-chat`).
    pub protocol: Option<String>,
    /// A model request in neutral form (history, prompts, offered tools, stream flag).
    pub conversation: Option<Conversation>,
    /// Whether the request offered any tool (requests without tools get the default answer).
    pub tools_offered: bool,
    /// What decided the answer.
    pub answered_by: AnsweredBy,
    /// What the server sent back.
    pub reply: Reply,
}

impl RecordedRequest {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The task the request belongs to, as the worker named it (`x-ganger-task`).
    pub fn task(&self) -> Option<&str> {
        self.header(crate::witness::TASK_HEADER)
    }

    /// The text of every user prompt of the request's conversation, in order (none when it
    /// carried no conversation).
    pub fn prompts(&self) -> Vec<String> {
        self.conversation
            .as_ref()
            .map(|c| c.prompts().into_iter().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

/// What the server sent back to a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// A model answer (text or tool call), streamed or not as asked.
    Answer {
        /// The answer as sent.
        answer: Answer,
        /// The token counts sent with it.
        usage: TokenUsage,
    },
    /// A scripted fault.
    Fault {
        /// Which.
        fault: Fault,
    },
    /// An HTTP error that was not scripted: an unreadable body (400) or an unknown path (404).
    Error {
        /// The HTTP status.
        status: u16,
        /// The error message in the body.
        message: String,
    },
    /// The model list (`GET /v1/models`).
    ModelList,
    /// A token count (`POST /v1/messages/count_tokens`), estimated as for an answer's input.
    TokenCount {
        /// The `input_tokens` sent.
        input_tokens: u64,
    },
}
