//! A tool's answer: compact text for the model to read, and the same JSON document the
//! command line prints with `--json` as the structured content. A failure is a tool error
//! (`isError`) carrying the command line's message and hint as text and `ganger.error/1` as
//! JSON, never a protocol error: the model reads why and can correct itself.

use ganger_engine::{EngineError, ErrorDocument};
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

/// What one tool call answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub json: Value,
    pub error: bool,
}

impl Answer {
    /// A result: its JSON document and the text made of it.
    pub fn of<T: Serialize + ?Sized>(value: &T, text: String) -> Answer {
        Answer {
            text,
            json: serde_json::to_value(value).unwrap_or(Value::Null),
            error: false,
        }
    }

    /// The engine refused or failed: its message, causes and hint, as the CLI prints them.
    pub fn failure(error: &EngineError) -> Answer {
        Answer::refusal(ErrorDocument::from(error))
    }

    /// Arguments the tool cannot take: one line naming what is wrong.
    pub fn bad_arguments(tool: &str, why: &str) -> Answer {
        Answer::failure(&EngineError::invalid(format!(
            "bad arguments for {tool}: {why}"
        )))
    }

    /// `ganger.error/1` as a tool error: its lines as the CLI prints them, and the document.
    fn refusal(document: ErrorDocument) -> Answer {
        let mut text = format!("error: {}\n", document.error);
        for cause in &document.causes {
            text.push_str(&format!("  caused by: {cause}\n"));
        }
        if let Some(hint) = &document.hint {
            text.push_str(&format!("hint: {hint}\n"));
        }
        Answer {
            text,
            json: serde_json::to_value(&document).unwrap_or(Value::Null),
            error: true,
        }
    }

    /// The answer as MCP's tool result.
    pub fn into_result(self) -> CallToolResult {
        let content = vec![ContentBlock::text(self.text)];
        let mut result = if self.error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        result.structured_content = Some(self.json);
        result
    }
}

/// An engine result, or its failure as an answer.
pub fn answer<T>(result: Result<T, EngineError>, ok: impl FnOnce(T) -> Answer) -> Answer {
    match result {
        Ok(value) => ok(value),
        Err(error) => Answer::failure(&error),
    }
}

/// What rmcp says of arguments a tool's type cannot take, before our words.
const RMCP_BAD_ARGUMENTS: &str = "failed to deserialize parameters: ";

/// Tool `tool`'s response, with rmcp's own tool error for arguments that do not fit (it reads
/// them before the tool runs) said as the command line says bad input: `bad arguments for
/// TOOL: ...`, with `ganger.error/1`. Every answer of ours carries its document, so an error
/// without one is rmcp's.
pub fn in_our_words(tool: &str, response: CallToolResponse) -> CallToolResponse {
    if let CallToolResponse::Complete(result) = &response
        && result.is_error == Some(true)
        && result.structured_content.is_none()
        && let Some(why) = result
            .content
            .first()
            .and_then(|content| content.as_text())
            .and_then(|text| text.text.strip_prefix(RMCP_BAD_ARGUMENTS))
    {
        return Answer::bad_arguments(tool, why).into_result().into();
    }
    response
}
