//! A warm round's stream in the agent's own cold format (Claude Code's stream-json) with
//! ganger's lines among the agent's: the agent's lines go to its cold reader (its adapter's
//! fast path included), ganger's become events here.
//!
//! - `ganger: turn` yields [`Event::Session`] (the agent names it again in its own lines).
//! - `ganger: permission` that allows yields [`Event::PermissionGranted`]; one that denies
//!   yields nothing for an agent that lists a denied call among its
//!   refusals itself (Claude Code: its tool result is ganger's message, `refused by ganger
//!   (RULE)`, and its reader turns the listing into [`Event::PermissionRejected`] once); for one
//!   that does not (Codex), a denial yields [`Event::PermissionRejected`] here.
//! - `ganger: usage` with `running` yields the turn's tokens so far ([`UsageMode::RoundTotal`]),
//!   which the round's budgets watch.
//! - `ganger: error` yields [`Event::Error`]; any other ganger line [`Event::Unknown`].

use super::{BY_GANGER, GANGER_KEY};
use crate::{Feed, ParsedLine, StreamParser};
use ganger_events::{Event, RoundSummary, Usage, UsageMode};
use serde_json::Value;

/// Reads a warm round's stream whose agent lines are in its cold format.
pub struct GangerLines {
    agent: Box<dyn StreamParser>,
    /// Whether ganger's denials are the round's refusals (the agent does not list them).
    denials: bool,
}

impl GangerLines {
    /// A reader that passes the agent's lines to `agent`, which lists the calls ganger denied.
    pub fn new(agent: Box<dyn StreamParser>) -> GangerLines {
        GangerLines {
            agent,
            denials: false,
        }
    }

    /// A reader that passes the agent's lines to `agent`, and takes ganger's denials as the
    /// round's refusals.
    pub fn listing_denials(agent: Box<dyn StreamParser>) -> GangerLines {
        GangerLines {
            agent,
            denials: true,
        }
    }

    /// The events of ganger's line `value` (whose `ganger` member is `what`).
    fn ganger_events(&self, what: &str, value: &Value) -> Vec<Event> {
        let text = |key: &str| value[key].as_str().map(str::to_owned);
        match what {
            "permission" if self.denials && value["decision"] == "deny" => {
                vec![Event::PermissionRejected {
                    tool: text("tool").unwrap_or_default(),
                    message: format!("{BY_GANGER} ({})", text("rule").unwrap_or_default()),
                }]
            }
            "permission" if value["decision"] == "allow" => vec![Event::PermissionGranted {
                tool: text("tool").unwrap_or_default(),
                rule: text("rule").unwrap_or_default(),
            }],
            "usage" if value["running"] == true => {
                let tokens = |key: &str| value[key].as_u64().unwrap_or(0);
                vec![Event::Usage {
                    usage: Usage {
                        input: tokens("input"),
                        output: tokens("output"),
                        reasoning: tokens("reasoning"),
                        cache_read: tokens("cache_read"),
                        cache_write: tokens("cache_write"),
                        cost_usd: None,
                        mode: UsageMode::RoundTotal,
                    },
                }]
            }
            _ => ganger_events(what, value),
        }
    }
}

/// The events of ganger's line `value` (whose `ganger` member is `what`) for every agent.
fn ganger_events(what: &str, value: &Value) -> Vec<Event> {
    let text = |key: &str| value[key].as_str().map(str::to_owned);
    match what {
        "turn" => text("session")
            .map(|id| Event::Session { id })
            .into_iter()
            .collect(),
        "permission" => Vec::new(),
        "gateway" => serde_json::from_value(value.clone())
            .map(|tally| Event::Gateway { tally })
            .into_iter()
            .collect(),
        "error" => vec![Event::Error {
            // ganger's own error (its warm host's) has no class to name.
            name: String::new(),
            message: text("message").unwrap_or_default(),
            status_code: None,
            retryable: None,
        }],
        other => vec![Event::Unknown {
            kind: format!("ganger.{other}"),
        }],
    }
}

/// What every ganger line holds, and an agent's line only inside a string (then escaped).
const MARK: &[u8] = b"\"ganger\":\"";

/// ganger's line, when `line` is one: its `ganger` member and the whole value.
fn ganger_line(line: &[u8]) -> Option<(String, Value)> {
    // A quick look spares parsing the agent's lines twice: ganger's hold its key, and have no
    // `type` (every line of the agent's has one).
    memchr::memmem::find(line, MARK)?;
    let value: Value = serde_json::from_slice(line).ok()?;
    if value.get("type").is_some() {
        return None;
    }
    let what = value.get(GANGER_KEY)?.as_str()?.to_owned();
    Some((what, value))
}

impl GangerLines {
    fn parsed(&self, (what, value): (String, Value)) -> ParsedLine {
        ParsedLine {
            events: self.ganger_events(&what, &value),
            kind: Some(format!("ganger.{what}")),
        }
    }
}

impl StreamParser for GangerLines {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        match ganger_line(line) {
            Some(ganger) => self.parsed(ganger),
            None => self.agent.parse_line(line),
        }
    }

    fn feed(&mut self, line: &[u8], summary: &mut RoundSummary) -> Feed {
        match ganger_line(line) {
            Some(ganger) => {
                let parsed = self.parsed(ganger);
                parsed.fold_into(summary);
                Feed {
                    progress: parsed.is_progress(),
                }
            }
            None => self.agent.feed(line, summary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize_stream;

    #[test]
    fn the_mark_is_the_key() {
        assert_eq!(MARK, format!("\"{GANGER_KEY}\":\"").as_bytes());
    }

    #[test]
    fn ganger_lines_become_events_and_the_agents_go_to_its_reader() {
        let stream = concat!(
            r#"{"agent_pid":7,"cost_before":null,"ganger":"turn","round":2,"session":"s-1","warm":true}"#,
            "\n",
            r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-fake"}"#,
            "\n",
            r#"{"decision":"deny","ganger":"permission","rule":"a read-only round may not edit","tool":"Write"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Done."}]},"session_id":"s-1"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s-1","usage":{"input_tokens":10,"output_tokens":2},"permission_denials":[{"tool_name":"Write","tool_use_id":"c1","tool_input":{}}]}"#,
            "\n",
            r#"{"ganger":"error","message":"the warm agent exited during the turn"}"#,
            "\n",
        );
        let mut parser = GangerLines::new(Box::new(crate::claude::stream_parser()));
        let summary = summarize_stream(&mut parser, stream.as_bytes());
        assert_eq!(summary.session.as_deref(), Some("s-1"));
        assert_eq!(summary.answer.as_deref(), Some("Done."));
        assert!(summary.ended);
        assert_eq!(summary.rejection_count, 1, "{:?}", summary.rejections);
        assert_eq!(summary.errors, ["the warm agent exited during the turn"]);
        assert_eq!(summary.tokens.input, 10);
    }

    #[test]
    fn decisions_and_running_totals_are_events_of_their_own() {
        let allow = br#"{"decision":"allow","ganger":"permission","rule":"allowed by default","tool":"shell"}"#;
        let deny = br#"{"decision":"deny","ganger":"permission","rule":"a read-only round may not edit","tool":"apply_patch"}"#;
        let running = br#"{"ganger":"usage","running":true,"input":90,"output":4,"reasoning":0,"cache_read":10,"cache_write":0}"#;
        let granted = Event::PermissionGranted {
            tool: "shell".to_owned(),
            rule: "allowed by default".to_owned(),
        };
        let mut listed = GangerLines::new(Box::new(crate::claude::stream_parser()));
        assert_eq!(
            listed.parse_line(allow).events,
            std::slice::from_ref(&granted)
        );
        // Claude lists its refusals itself: ganger's line adds none.
        assert!(listed.parse_line(deny).events.is_empty());
        let mut own = GangerLines::listing_denials(Box::new(crate::codex::CodexStream));
        assert_eq!(own.parse_line(allow).events, [granted]);
        assert_eq!(
            own.parse_line(deny).events,
            [Event::PermissionRejected {
                tool: "apply_patch".to_owned(),
                message: format!("{BY_GANGER} (a read-only round may not edit)"),
            }]
        );
        let usage = own.parse_line(running);
        assert!(!usage.is_progress());
        assert!(matches!(
            usage.events.as_slice(),
            [Event::Usage { usage }] if usage.input == 90 && usage.cache_read == 10
                && usage.mode == UsageMode::RoundTotal
        ));
    }
}
