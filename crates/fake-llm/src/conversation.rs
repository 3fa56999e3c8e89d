//! The protocol-neutral form of a model request and of the answer to it.
//!
//! Every wire protocol (OpenAI chat completions, Anthropic Messages; OpenAI Responses next)
//! parses its request body into a [`Conversation`] and renders an [`Answer`] back in its
//! own shape, so the script engine and the templates never see a wire format.

use serde::{Deserialize, Serialize};

/// Who said a message in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// System or developer instructions.
    System,
    /// A person's prompt (text typed by the user or sent by ganger).
    User,
    /// An earlier answer of the model (text, tool calls or both).
    Assistant,
    /// The result of a tool call, sent back by the agent.
    Tool,
}

/// One message of a conversation, reduced to its role and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// The text parts joined with newlines; for a tool result, the tool's output.
    pub text: String,
    /// For an assistant message: the names of the tools it called, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<String>,
}

/// A model request in protocol-neutral form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    /// The model name the agent asked for.
    pub model: String,
    /// Whether the agent asked for a streamed answer.
    pub stream: bool,
    /// The whole history the agent sent, in order.
    pub messages: Vec<Message>,
    /// The names of the tools the agent offered (empty for title or summary requests).
    pub tools: Vec<String>,
}

impl Conversation {
    /// Whether the agent offered any tool. Requests without tools are side requests (session
    /// titles, summaries) and get the script's default answer.
    pub fn offers_tools(&self) -> bool {
        !self.tools.is_empty()
    }

    /// The text of the last message when it is a user prompt, that is when this request opens
    /// a new prompt rather than continuing after a tool result. System messages after the
    /// prompt (Claude Code sends some inside `messages`) do not count as the last message.
    pub fn new_prompt(&self) -> Option<&str> {
        let last = self
            .messages
            .iter()
            .rev()
            .find(|message| message.role != Role::System);
        match last {
            Some(message) if message.role == Role::User => Some(&message.text),
            _ => None,
        }
    }

    /// The text of every user prompt in the history, oldest first.
    pub fn prompts(&self) -> Vec<&str> {
        self.messages
            .iter()
            .filter(|message| message.role == Role::User)
            .map(|message| message.text.as_str())
            .collect()
    }

    /// The latest user prompt anywhere in the history (the prompt of the current round).
    pub fn last_prompt(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|message| message.role == Role::User)
            .map(|message| message.text.as_str())
    }

    /// How many tool results the history carries.
    pub fn tool_results(&self) -> usize {
        self.messages
            .iter()
            .filter(|message| message.role == Role::Tool)
            .count()
    }
}

/// What the model says back, before a protocol renders it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// A plain text answer; the agent's round ends with it.
    Text {
        /// The text, templates already filled in.
        text: String,
    },
    /// One tool call; the agent runs the tool and sends the result in its next request.
    ToolCall {
        /// The tool's name as the agent offered it.
        name: String,
        /// The call's arguments: a JSON object, or a string that is the raw input of a custom
        /// (freeform) tool such as Codex's `apply_patch`; see [`arguments_text`].
        arguments: serde_json::Value,
        /// The call's id, unique within this server.
        call_id: String,
    },
}

/// A tool call's arguments as they go on the wire: a string as it is (a custom tool's raw
/// input), anything else as compact JSON.
pub(crate) fn arguments_text(arguments: &serde_json::Value) -> String {
    match arguments {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The token counts the server reports for one answer, the same whatever the protocol, and
/// recorded with the request so tests can check an agent's figures against what it was sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens: the request's message texts, estimated.
    pub input: u64,
    /// Completion tokens: the answer, estimated.
    pub output: u64,
}

impl TokenUsage {
    /// The estimate for `answer` to `conversation`: one token per four characters, at least one
    /// each way.
    pub fn estimate(conversation: &Conversation, answer: &Answer) -> TokenUsage {
        let prompt_chars: usize = conversation
            .messages
            .iter()
            .map(|message| message.text.chars().count())
            .sum();
        let answer_chars = match answer {
            Answer::Text { text } => text.chars().count(),
            Answer::ToolCall {
                name, arguments, ..
            } => name.len() + arguments_text(arguments).len(),
        };
        TokenUsage {
            input: estimate_tokens(prompt_chars),
            output: estimate_tokens(answer_chars),
        }
    }
}

/// A rough token count: one token per four characters, at least one.
fn estimate_tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4).max(1)).unwrap_or(u64::MAX)
}
