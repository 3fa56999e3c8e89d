//! Google's Gemini API as Gemini CLI speaks it: `POST /v1beta/models/<model>:streamGenerateContent`
//! (server-sent `data:` events, each a whole `GenerateContentResponse`, no event names and no
//! `[DONE]`) and `POST /v1beta/models/<model>:generateContent` (one JSON document).
//!
//! The model and whether the answer is streamed are in the path, not in the body, so there is
//! one protocol value per method and the model comes from [`WireProtocol::model_in_path`].

mod error_body;
mod json_answer;
mod request;
mod response;
mod stream;

use serde_json::Value;

use crate::conversation::{Answer, Conversation};
use crate::protocol::{RenderContext, SseEvent, WireProtocol};

/// The path prefix of every Gemini model method.
const MODELS_PREFIX: &str = "/v1beta/models/";

/// The Gemini protocol, for one of its two generate methods.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gemini {
    /// `streamGenerateContent` (true) or `generateContent` (false).
    streamed: bool,
}

/// `POST /v1beta/models/<model>:streamGenerateContent`.
pub(crate) static STREAMED: Gemini = Gemini { streamed: true };

/// `POST /v1beta/models/<model>:generateContent`.
pub(crate) static UNARY: Gemini = Gemini { streamed: false };

/// The Gemini protocol served at `path`, if it is one of the two generate methods.
pub(crate) fn for_path(path: &str) -> Option<&'static Gemini> {
    match split_model_path(path)?.1 {
        "streamGenerateContent" => Some(&STREAMED),
        "generateContent" => Some(&UNARY),
        _ => None,
    }
}

/// Whether `path` belongs to the Gemini API, so that a 404 there takes Google's shape.
pub(crate) fn owns_path(path: &str) -> bool {
    path.starts_with("/v1beta/")
}

/// `(model, method)` of `/v1beta/models/<model>:<method>`.
fn split_model_path(path: &str) -> Option<(&str, &str)> {
    path.trim_end_matches('/')
        .strip_prefix(MODELS_PREFIX)?
        .rsplit_once(':')
        .filter(|(model, _)| !model.is_empty())
}

impl WireProtocol for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn parse(&self, body: &Value) -> Result<Conversation, String> {
        request::parse(body, self.streamed)
    }

    fn model_in_path(&self, path: &str) -> Option<String> {
        split_model_path(path).map(|(model, _)| model.to_owned())
    }

    fn events(&self, answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
        let answer = json_answer::as_requested(answer, context.body);
        stream::events(&answer, context)
    }

    fn document(&self, answer: &Answer, context: RenderContext<'_>) -> Value {
        let answer = json_answer::as_requested(answer, context.body);
        response::document(&answer, context)
    }

    fn error_body(&self, status: u16, message: &str) -> Value {
        error_body::error_body(status, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_method_and_the_model() {
        let streamed = "/v1beta/models/gemini-fake:streamGenerateContent";
        assert!(for_path(streamed).is_some_and(|p| p.streamed));
        assert!(for_path("/v1beta/models/m:generateContent/").is_some_and(|p| !p.streamed));
        assert!(for_path("/v1beta/models/m:countTokens").is_none());
        assert!(for_path("/v1beta/models/:generateContent").is_none());
        assert!(for_path("/v1/chat/completions").is_none());
        assert_eq!(
            STREAMED.model_in_path(streamed).as_deref(),
            Some("gemini-fake")
        );
    }
}
