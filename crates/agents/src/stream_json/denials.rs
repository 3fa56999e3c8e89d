//! Calls a permission refused, read as [`Event::PermissionRejected`] whichever way the CLI
//! reports them.
//!
//! - Claude Code 2.1.332 prints a `system` line `permission_denied` the moment it refuses a
//!   call, with the tool, the call's id and a reason (`Path is outside allowed working
//!   directories`; only a `message` when the permission mode refused it).
//! - Claude Code 2.1.197 and Qwen Code (0.15.10 and 0.24.4) only list the refused calls in
//!   the result's `permission_denials`; the reason is then the text of the call's tool result,
//!   which is kept here by the call's id until the result (the first [`KEPT`] error texts).
//!
//! A refusal reported by a `permission_denied` line is not reported again by the result.

use crate::stream_json::tool_calls;
use crate::stream_json::wire::Denial;
use ganger_events::Event;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How many error texts of tool results, and reported refusals, are kept until the result.
const KEPT: usize = 256;

/// Reasons longer than this are cut at their first sentence (Claude's `dontAsk` message goes
/// on with advice to the model).
const LONG_REASON: usize = 200;

/// The reason given when the CLI gave none.
const NO_REASON: &str = "refused by the agent's permission settings";

/// What the reader remembers of refusals between lines.
#[derive(Debug, Clone, Default)]
pub struct Denials {
    /// The error texts of tool results, by call id.
    errors: HashMap<String, String>,
    /// Calls whose refusal a `permission_denied` line reported.
    reported: HashSet<String>,
}

impl Denials {
    /// The refusal a `permission_denied` line reports: `tool` refused the call `id` (whose
    /// arguments are titled `title`, when known) for `reason`, else with `message`.
    pub fn refused_now(
        &mut self,
        tool: Option<String>,
        id: Option<String>,
        title: Option<&str>,
        reason: Option<String>,
        message: Option<String>,
    ) -> Event {
        if let Some(id) = id
            && self.reported.len() < KEPT
        {
            self.reported.insert(id);
        }
        rejected(tool, title, reason.or(message).as_deref())
    }

    /// Keeps the error text of the tool result answering the call `id`.
    pub fn tool_failed(&mut self, id: Option<&str>, text: &str) {
        if let Some(id) = id
            && self.errors.len() < KEPT
        {
            self.errors.insert(id.to_owned(), text.to_owned());
        }
    }

    /// The refusals a result's `permission_denials` lists that no `permission_denied` line
    /// reported, in order; forgets everything (the run is over).
    pub fn listed(&mut self, denials: Option<&Value>) -> Vec<Event> {
        let list = match denials {
            Some(Value::Array(list)) => list.as_slice(),
            _ => &[],
        };
        let events = list
            .iter()
            .filter_map(|entry| Denial::deserialize(entry).ok())
            .filter_map(|denial| {
                let id = denial.tool_use_id.into_inner();
                if id.as_ref().is_some_and(|id| self.reported.contains(id)) {
                    return None;
                }
                let reason = id.as_ref().and_then(|id| self.errors.get(id));
                let title = tool_calls::title(denial.tool_input.as_ref());
                Some(rejected(
                    denial.tool_name.into_inner(),
                    title.as_deref(),
                    reason.map(String::as_str),
                ))
            })
            .collect();
        self.errors.clear();
        self.reported.clear();
        events
    }
}

/// The event of one refusal: the reason, then what the call was about unless the reason
/// already says it.
fn rejected(tool: Option<String>, title: Option<&str>, reason: Option<&str>) -> Event {
    let reason = reason
        .map(short_reason)
        .filter(|reason| !reason.is_empty())
        .unwrap_or_else(|| NO_REASON.to_owned());
    let message = match title {
        Some(title) if !reason.contains(title) => format!("{reason} ({title})"),
        _ => reason,
    };
    Event::PermissionRejected {
        tool: tool.unwrap_or_else(|| tool_calls::UNNAMED_TOOL.to_owned()),
        message,
    }
}

/// The first line of a reason, cut at its first sentence when it is long.
fn short_reason(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() <= LONG_REASON {
        return line.to_owned();
    }
    match line.find(". ") {
        Some(end) => line[..=end].to_owned(),
        None => line.chars().take(LONG_REASON).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(tool: &str, message: &str) -> Event {
        Event::PermissionRejected {
            tool: tool.into(),
            message: message.into(),
        }
    }

    #[test]
    fn a_refusal_reported_as_it_happens_is_not_reported_again_by_the_result() {
        let mut denials = Denials::default();
        assert_eq!(
            denials.refused_now(
                Some("Write".into()),
                Some("t1".into()),
                Some("/p/x.txt"),
                Some("Path is outside allowed working directories".into()),
                Some("Claude requested permissions to write to /p/x.txt".into()),
            ),
            event(
                "Write",
                "Path is outside allowed working directories (/p/x.txt)"
            )
        );
        let listed = json!([
            {"tool_name": "Write", "tool_use_id": "t1", "tool_input": {"file_path": "/p/x.txt"}},
            {"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "touch y"}}
        ]);
        denials.tool_failed(Some("t2"), "Permission to use Bash has been denied.");
        assert_eq!(
            denials.listed(Some(&listed)),
            vec![event(
                "Bash",
                "Permission to use Bash has been denied. (touch y)"
            )]
        );
        // Forgotten after the result: a later round's list stands on its own.
        assert_eq!(
            denials.listed(Some(&listed)),
            vec![
                event(
                    "Write",
                    "refused by the agent's permission settings (/p/x.txt)"
                ),
                event(
                    "Bash",
                    "refused by the agent's permission settings (touch y)"
                ),
            ]
        );
    }

    #[test]
    fn reasons_keep_their_first_line_and_long_ones_their_first_sentence() {
        let mut denials = Denials::default();
        denials.tool_failed(
            Some("t1"),
            "Claude requested permissions to write to /p/x.txt, but you haven't granted it yet.",
        );
        let listed = json!([{"tool_name": "Write", "tool_use_id": "t1", "tool_input": {"file_path": "/p/x.txt"}}]);
        assert_eq!(
            denials.listed(Some(&listed)),
            vec![event(
                "Write",
                "Claude requested permissions to write to /p/x.txt, but you haven't granted it yet."
            )]
        );
        let long = format!(
            "Permission to use Write has been denied because Claude Code is running in don't ask mode. IMPORTANT: {}",
            "advice ".repeat(40)
        );
        assert_eq!(
            denials.refused_now(Some("Write".into()), None, None, None, Some(long)),
            event(
                "Write",
                "Permission to use Write has been denied because Claude Code is running in don't ask mode."
            )
        );
        assert_eq!(
            denials.refused_now(None, None, None, None, None),
            event("?", "refused by the agent's permission settings")
        );
        assert_eq!(denials.listed(Some(&json!("not a list"))), Vec::new());
    }
}
