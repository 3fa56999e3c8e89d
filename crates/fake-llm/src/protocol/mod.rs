//! The protocol layer: one module per model API, each turning its request body into a
//! [`Conversation`] and an [`Answer`] or an error back into its own wire shape.
//!
//! A protocol describes its response as a [`WireResponse`] (status, headers, JSON or a list
//! of server-sent events) and knows nothing of HTTP serving, the script or faults; the server
//! applies faults (cutting a stream, sending garbage) to whatever a protocol renders. Adding
//! a protocol means a new module here and a line in [`for_path`].

use serde_json::Value;

use crate::conversation::{Answer, Conversation, TokenUsage};

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
pub(crate) mod reminders;
mod request_body;

/// A response body in protocol terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WireBody {
    /// A JSON document (`content-type: application/json`).
    Json(Value),
    /// Server-sent events (`content-type: text/event-stream`), in order.
    Sse(Vec<SseEvent>),
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` line, for protocols that name their events (Anthropic, Responses).
    pub(crate) event: Option<String>,
    /// The `data:` payload (a JSON document, or a sentinel such as `[DONE]`).
    pub(crate) data: String,
}

impl SseEvent {
    /// An event with only a `data:` line.
    pub(crate) fn data(data: impl Into<String>) -> Self {
        SseEvent {
            event: None,
            data: data.into(),
        }
    }

    /// The event as it goes on the wire, blank line included.
    pub(crate) fn to_wire(&self) -> String {
        match &self.event {
            Some(event) => format!("event: {event}\ndata: {}\n\n", self.data),
            None => format!("data: {}\n\n", self.data),
        }
    }
}

/// What the server needs to render an answer beyond the answer itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RenderContext<'a> {
    /// The request, parsed.
    pub(crate) conversation: &'a Conversation,
    /// The request body as sent, for protocol options the neutral form does not carry.
    pub(crate) body: &'a Value,
    /// The server's sequence number of this request, for unique ids.
    pub(crate) request_index: usize,
    /// Seconds since the epoch, for `created` fields.
    pub(crate) created: u64,
    /// The token counts to report with the answer (also recorded with the request).
    pub(crate) usage: TokenUsage,
}

/// One model API.
pub(crate) trait WireProtocol: Sync {
    /// The name recorded with each request (`openai-chat`).
    fn name(&self) -> &'static str;

    /// Reads a request body; the error says what is wrong with it.
    fn parse(&self, body: &Value) -> Result<Conversation, String>;

    /// The model named in the request's path, for protocols that put it there rather than in
    /// the body (Gemini); it replaces the parsed conversation's model.
    fn model_in_path(&self, _path: &str) -> Option<String> {
        None
    }

    /// Renders an answer, streamed or not as the request asked.
    fn render(&self, answer: &Answer, context: RenderContext<'_>) -> WireBody {
        if context.conversation.stream {
            WireBody::Sse(self.events(answer, context))
        } else {
            WireBody::Json(self.document(answer, context))
        }
    }

    /// An answer as the server-sent events of a streamed response.
    fn events(&self, answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent>;

    /// An answer as the one JSON document of a response that is not streamed.
    fn document(&self, answer: &Answer, context: RenderContext<'_>) -> Value;

    /// The JSON body of an error response with this HTTP status.
    fn error_body(&self, status: u16, message: &str) -> Value;
}

/// The protocol served at `path`, if any.
pub(crate) fn for_path(path: &str) -> Option<&'static dyn WireProtocol> {
    match path.trim_end_matches('/') {
        "/v1/chat/completions" | "/chat/completions" => Some(&openai_chat::OpenAiChat),
        "/v1/responses" | "/responses" => Some(&openai_responses::OpenAiResponses),
        "/v1/messages" => Some(&anthropic::AnthropicMessages),
        other => gemini::for_path(other).map(|gemini| gemini as &dyn WireProtocol),
    }
}

/// The protocol whose error shape a 404 at `path` takes: Gemini's under `/v1beta/`, else
/// OpenAI's.
pub(crate) fn for_unknown_path(path: &str) -> &'static dyn WireProtocol {
    if gemini::owns_path(path) {
        &gemini::UNARY
    } else {
        &openai_chat::OpenAiChat
    }
}
