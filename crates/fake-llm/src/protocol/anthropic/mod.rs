//! Anthropic Messages (`POST /v1/messages`), as Claude Code speaks it: streamed as named
//! server-sent events (`message_start` … `message_stop`), or one `message` document when
//! `stream` is false. Also `POST /v1/messages/count_tokens` through [`count_tokens`].

mod error_body;
mod request;
mod response;
mod stream;

use serde_json::{Value, json};

use crate::conversation::{Answer, Conversation, TokenUsage};
use crate::protocol::{RenderContext, SseEvent, WireProtocol};

/// The Anthropic Messages protocol.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnthropicMessages;

impl WireProtocol for AnthropicMessages {
    fn name(&self) -> &'static str {
        "anthropic-messages"
    }

    fn parse(&self, body: &Value) -> Result<Conversation, String> {
        request::parse(body)
    }

    fn events(&self, answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
        stream::events(answer, context)
    }

    fn document(&self, answer: &Answer, context: RenderContext<'_>) -> Value {
        response::message(answer, context)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error_body::error_body(status, message)
    }
}

/// The answer to `POST /v1/messages/count_tokens` for a request that parsed as
/// `conversation`: the count, estimated as for a model answer's input, and the body
/// `{"input_tokens":N}`.
pub(crate) fn count_tokens(conversation: &Conversation) -> (u64, Value) {
    let nothing = Answer::Text {
        text: String::new(),
    };
    let input_tokens = TokenUsage::estimate(conversation, &nothing).input;
    (input_tokens, json!({"input_tokens": input_tokens}))
}
