//! OpenAI Responses (`POST /v1/responses`), as Codex CLI speaks it: `input` items instead of
//! messages, function tools and custom (freeform) tools, and named server-sent events
//! (`response.created` … `response.completed`), or one `response` document when `stream` is
//! false.

mod context_message;
mod request;
mod response;
mod stream;

use serde_json::Value;

use crate::conversation::{Answer, Conversation};
use crate::protocol::openai_chat::error_body::error_body;
use crate::protocol::{RenderContext, SseEvent, WireProtocol};

/// The OpenAI Responses protocol.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenAiResponses;

impl WireProtocol for OpenAiResponses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn parse(&self, body: &Value) -> Result<Conversation, String> {
        request::parse(body)
    }

    fn events(&self, answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
        stream::events(answer, context)
    }

    fn document(&self, answer: &Answer, context: RenderContext<'_>) -> Value {
        response::document(answer, context, "completed")
    }

    /// The Responses API sends the same error shape as chat completions.
    fn error_body(&self, status: u16, message: &str) -> Value {
        error_body(status, message)
    }
}
