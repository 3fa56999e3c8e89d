//! OpenAI chat completions (`POST /v1/chat/completions`), as `@ai-sdk/openai-compatible`
//! (OpenCode) and Qwen Code speak it: streamed as `data:` chunks ending with `data: [DONE]`,
//! or one JSON document when `stream` is false.

pub(crate) mod error_body;
mod request;
mod response;
pub(crate) mod stream;

pub(crate) use stream::pieces;

use serde_json::Value;

use crate::conversation::{Answer, Conversation};
use crate::protocol::{RenderContext, SseEvent, WireProtocol};

/// The OpenAI chat completions protocol.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenAiChat;

impl WireProtocol for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn parse(&self, body: &Value) -> Result<Conversation, String> {
        request::parse(body)
    }

    fn events(&self, answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
        stream::chunks(answer, context)
    }

    fn document(&self, answer: &Answer, context: RenderContext<'_>) -> Value {
        response::completion(answer, context)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error_body::error_body(status, message)
    }
}
