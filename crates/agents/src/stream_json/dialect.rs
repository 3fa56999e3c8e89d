//! Where Claude Code's and Qwen Code's stream-json differ, in one place.
//!
//! | | Claude Code | Qwen Code |
//! |---|---|---|
//! | `result.usage` | this run ([`UsageMode::RoundTotal`]) | the whole session ([`UsageMode::SessionTotal`]) |
//! | cost | an estimate: `model_usage_since_last_result`'s `costUSD` summed over the models (2.1.332, whose `total_cost_usd` is the session's running cost), else `total_cost_usd` (2.1.197, the run's own) | none |
//! | an API error | `is_error: true`, `api_error_status`, exit 1 | text `[API Error: 401 …]`: in `result` with `is_error: false` and exit 0 (0.15.10), in `error.message` with `is_error: true` and exit 1 (0.24.4) |
//! | the error's assistant line | model `<synthetic>` | the model's own name, the same text |

use ganger_events::UsageMode;

/// Which CLI printed the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Claude Code.
    Claude,
    /// Qwen Code.
    Qwen,
}

/// An API error Qwen reported only as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// The HTTP status, when the text starts with one.
    pub status: Option<u16>,
    /// The rest of the text.
    pub message: String,
}

/// How Qwen words an API error in place of an answer.
const QWEN_API_ERROR: &str = "[API Error:";

impl Dialect {
    /// The CLI's name for people.
    pub fn display_name(self) -> &'static str {
        match self {
            Dialect::Claude => "Claude Code",
            Dialect::Qwen => "Qwen Code",
        }
    }

    /// What a `result` line's usage covers.
    pub fn usage_mode(self) -> UsageMode {
        match self {
            Dialect::Claude => UsageMode::RoundTotal,
            Dialect::Qwen => UsageMode::SessionTotal,
        }
    }

    /// The round's own cost, from the `result` line: `since_last_result` (what its
    /// `model_usage_since_last_result` costs) when the line has one, else `total_cost_usd`.
    ///
    /// Claude Code 2.1.332's `total_cost_usd` is the whole session's, also on a cold
    /// `--resume` round (round 2 reported round 1's cost plus its own), and a fork's includes
    /// its parent's, so that taking it would count every earlier round again. 2.1.197 has no
    /// `model_usage_since_last_result`, and its `total_cost_usd` is the run's own.
    pub fn cost(self, total_cost_usd: Option<f64>, since_last_result: Option<f64>) -> Option<f64> {
        match self {
            Dialect::Claude => since_last_result.or(total_cost_usd),
            Dialect::Qwen => None,
        }
    }

    /// The API error a text stands for, when this CLI reports errors as text (Qwen).
    pub fn text_error(self, text: &str) -> Option<TextError> {
        match self {
            Dialect::Claude => None,
            Dialect::Qwen => qwen_text_error(text),
        }
    }
}

/// Reads `[API Error: 401 fake server forced HTTP 401]` as status 401 and its message.
fn qwen_text_error(text: &str) -> Option<TextError> {
    let inner = text.trim_start().strip_prefix(QWEN_API_ERROR)?;
    let inner = match inner.rfind(']') {
        Some(end) => &inner[..end],
        None => inner,
    }
    .trim();
    let (first, rest) = inner.split_once(' ').unwrap_or((inner, ""));
    let status = (first.len() == 3)
        .then(|| first.parse::<u16>().ok())
        .flatten()
        .filter(|code| (100..600).contains(code));
    let message = match status {
        Some(_) if !rest.trim().is_empty() => rest.trim(),
        _ => inner,
    };
    Some(TextError {
        status,
        message: message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<(Option<u16>, String)> {
        Dialect::Qwen
            .text_error(text)
            .map(|error| (error.status, error.message))
    }

    #[test]
    fn qwen_api_errors_are_read_out_of_the_text() {
        assert_eq!(
            read("[API Error: 401 fake server forced HTTP 401]"),
            Some((Some(401), "fake server forced HTTP 401".into()))
        );
        assert_eq!(
            read("[API Error: Connection error. (cause: ECONNREFUSED)]"),
            Some((None, "Connection error. (cause: ECONNREFUSED)".into()))
        );
        assert_eq!(
            read("[API Error: 500 {\"error\":[\"x\"]}]"),
            Some((Some(500), "{\"error\":[\"x\"]}".into()))
        );
        assert_eq!(read("[API Error: 404]"), Some((Some(404), "404".into())));
        assert_eq!(read("Done. [API Error: 1]"), None);
        assert_eq!(Dialect::Claude.text_error("[API Error: 401 x]"), None);
    }
}
