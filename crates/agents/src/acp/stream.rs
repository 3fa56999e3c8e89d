//! A warm round's stream as ganger's events. The stream holds the agent's own ACP messages of
//! the turn (from the `session/prompt` request on; a loaded session's replay is not part of
//! it) and ganger's lines (`{"ganger": ...}`) where the warm host did something:
//!
//! - `ganger: turn` opens the round with [`Event::Session`] and [`Event::StepStarted`]; it
//!   carries the session's cost before the turn, since agents report the session's running
//!   cost (OpenCode's `usage_update`), and the round's is the difference.
//! - `agent_message_chunk` pieces are joined per message: each yields [`Event::Text`] with
//!   the message so far, so that the summary's answer is the whole last message.
//! - `tool_call` yields [`Event::ToolStarted`] and remembers the tool's name by the call's
//!   id; a `tool_call_update` of status `completed` or `failed` yields [`Event::Tool`], or
//!   [`Event::PermissionRejected`] when the agent's own guard refused the call (its adapter
//!   tells which failures those are: [`Refusal`]).
//! - `ganger: permission` with decision `deny` yields [`Event::PermissionRejected`] with the
//!   rule that refused the call; an allowed one yields [`Event::PermissionGranted`] with its rule.
//! - `ganger: usage` carries the turn's tokens from the agent's own records (OpenCode's
//!   answer holds its last request's only): they stand for the turn's.
//! - `ganger: error` (the warm agent died, a session could not be loaded) yields
//!   [`Event::Error`].
//! - The prompt's response ends the round: [`Event::StepFinished`] with its `stopReason` and
//!   the turn's tokens ([`UsageMode::RoundTotal`]), then [`Event::Ended`]; an error response
//!   yields [`Event::Error`] first.
//! - Updates that say nothing of the work (thoughts, plans, commands, modes) yield nothing
//!   beyond the count; any other update is [`Event::Unknown`]; a line that is not a JSON
//!   object is malformed.

use super::GANGER_KEY;
use super::protocol::{Incoming, classify};
use crate::{ParsedLine, StreamParser};
use ganger_events::{Event, ToolStatus, Usage, UsageMode};
use serde_json::Value;
use std::collections::HashMap;

/// Whether a failed tool call's text is the agent's own guard refusing the call (a path
/// outside its workspace) rather than the tool failing: the agent's knowledge, from its
/// adapter ([`crate::Adapter::warm_refusal`]).
pub type Refusal = fn(&str) -> bool;

/// How a refusal of ganger's own permissions starts its message (the agents' own say
/// otherwise): `refused by ganger (RULE)`.
pub const BY_GANGER: &str = "refused by ganger";

/// The longest refusal message kept, in characters.
const REFUSAL_CHARS: usize = 300;

/// Reads one warm round's stream.
#[derive(Debug, Clone, Default)]
pub struct AcpStream {
    /// Which failed calls are refusals, for this agent.
    refusal: Option<Refusal>,
    /// Tool names by call id.
    tools: HashMap<String, String>,
    /// The message being written: its id and its text so far.
    answer: Option<(Option<String>, String)>,
    /// The session's cost when the turn began, and the latest the agent reported.
    cost_before: Option<f64>,
    cost_now: Option<f64>,
    /// Tokens the agent reported per model request during the turn (Qwen Code's
    /// `_meta.usage` on a message piece), summed.
    per_request: Option<Usage>,
    /// The turn's tokens as the warm host read them from the agent's own records
    /// (`ganger: usage`), where its answer holds only some.
    recorded: Option<Usage>,
}

impl AcpStream {
    /// A reader for an agent whose failed calls `refusal` tells apart (`None`: none are).
    pub fn new(refusal: Option<Refusal>) -> AcpStream {
        AcpStream {
            refusal,
            ..AcpStream::default()
        }
    }
}

impl StreamParser for AcpStream {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        let Some(value) = crate::stream::json_object(line) else {
            return ParsedLine::malformed();
        };
        if let Some(what) = value.get(GANGER_KEY).and_then(Value::as_str) {
            let events = self.ganger_line(what, &value);
            return ParsedLine {
                kind: Some(format!("ganger.{what}")),
                events,
            };
        }
        match classify(line) {
            Some(Incoming::Notification { method, params }) if method == "session/update" => {
                let update = &params["update"];
                let kind = update["sessionUpdate"]
                    .as_str()
                    .unwrap_or("update")
                    .to_owned();
                let events = self.update(&kind, update);
                ParsedLine {
                    kind: Some(kind),
                    events,
                }
            }
            Some(Incoming::Notification { method, .. }) => ParsedLine {
                events: vec![Event::Unknown {
                    kind: method.clone(),
                }],
                kind: Some(method),
            },
            Some(Incoming::Request { method, .. }) => ParsedLine {
                kind: Some(method),
                events: Vec::new(),
            },
            Some(Incoming::Response { result, .. }) => ParsedLine {
                kind: Some("response".to_owned()),
                events: self.response(result),
            },
            None => ParsedLine::malformed(),
        }
    }
}

/// A round's stream read by whichever parser wrote it: a warm round's opens with ganger's
/// `turn` line and is read by the agent's warm reader (ACP's, or its cold one with ganger's
/// lines taken out); any other is the agent's own (`cold`). For readers of a
/// stored round (`ganger log`, a summary rebuilt from the stream) that do not know how it ran.
pub struct WarmOrCold {
    cold: Option<Box<dyn StreamParser>>,
    warm: Option<Box<dyn StreamParser>>,
    chosen: Option<Box<dyn StreamParser>>,
}

impl WarmOrCold {
    /// The reader for a stored round of `adapter`'s agent.
    pub fn of(adapter: &dyn crate::Adapter) -> WarmOrCold {
        WarmOrCold {
            cold: Some(adapter.stream_parser()),
            warm: Some(adapter.warm_stream_parser()),
            chosen: None,
        }
    }

    /// The reader for a round whose warm stream is ACP's.
    pub fn new(cold: Box<dyn StreamParser>, refusal: Option<Refusal>) -> WarmOrCold {
        WarmOrCold {
            cold: Some(cold),
            warm: Some(Box::new(AcpStream::new(refusal))),
            chosen: None,
        }
    }
}

impl WarmOrCold {
    /// The parser for this stream, chosen by its first line.
    fn parser(&mut self, line: &[u8]) -> &mut Box<dyn StreamParser> {
        self.chosen.get_or_insert_with(|| {
            let warm = serde_json::from_slice::<Value>(line)
                .is_ok_and(|v| v.get(GANGER_KEY).and_then(Value::as_str) == Some("turn"));
            let (chosen, other) = if warm {
                (self.warm.take(), self.cold.take())
            } else {
                (self.cold.take(), self.warm.take())
            };
            drop(other);
            chosen.unwrap_or_else(|| Box::new(AcpStream::new(None)))
        })
    }
}

impl StreamParser for WarmOrCold {
    fn parse_line(&mut self, line: &[u8]) -> ParsedLine {
        self.parser(line).parse_line(line)
    }

    /// The chosen parser's own `feed` (an adapter's fast path, where it has one).
    fn feed(&mut self, line: &[u8], summary: &mut ganger_events::RoundSummary) -> crate::Feed {
        self.parser(line).feed(line, summary)
    }
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

impl AcpStream {
    fn ganger_line(&mut self, what: &str, value: &Value) -> Vec<Event> {
        match what {
            "turn" => {
                self.cost_before = value["cost_before"].as_f64();
                let mut events = Vec::new();
                if let Some(id) = text(&value["session"]) {
                    events.push(Event::Session { id });
                }
                events.push(Event::StepStarted);
                events
            }
            "permission" if value["decision"] == "deny" => vec![Event::PermissionRejected {
                tool: text(&value["tool"]).unwrap_or_default(),
                message: format!("{BY_GANGER} ({})", text(&value["rule"]).unwrap_or_default()),
            }],
            "permission" => vec![Event::PermissionGranted {
                tool: text(&value["tool"]).unwrap_or_default(),
                rule: text(&value["rule"]).unwrap_or_default(),
            }],
            "usage" => {
                let tokens = |key: &str| value[key].as_u64().unwrap_or(0);
                let usage = Usage {
                    input: tokens("input"),
                    output: tokens("output"),
                    reasoning: tokens("reasoning"),
                    cache_read: tokens("cache_read"),
                    cache_write: tokens("cache_write"),
                    ..Usage::default()
                };
                // While the turn runs: its totals so far; else the turn's, for its end.
                if value["running"] == true {
                    return vec![Event::Usage {
                        usage: Usage {
                            mode: UsageMode::RoundTotal,
                            ..usage
                        },
                    }];
                }
                self.recorded = Some(usage);
                Vec::new()
            }
            "gateway" => serde_json::from_value(value.clone())
                .map(|tally| Event::Gateway { tally })
                .into_iter()
                .collect(),
            "error" => vec![Event::Error {
                // ganger's own error (its warm host's) has no class to name.
                name: String::new(),
                message: text(&value["message"]).unwrap_or_default(),
                status_code: None,
                retryable: None,
            }],
            other => vec![Event::Unknown {
                kind: format!("ganger.{other}"),
            }],
        }
    }

    fn update(&mut self, kind: &str, update: &Value) -> Vec<Event> {
        if kind != "agent_message_chunk" {
            // Anything else ends the message being written: a later piece starts a new one.
            self.answer = None;
        }
        if let Some(usage) = update["_meta"].get("usage") {
            let sum = self.per_request.get_or_insert_with(Usage::default);
            let tokens = |key: &str| usage[key].as_u64().unwrap_or(0);
            sum.input += tokens("inputTokens");
            sum.output += tokens("outputTokens");
            sum.reasoning += tokens("thoughtTokens");
            sum.cache_read += tokens("cachedReadTokens");
            sum.cache_write += tokens("cachedWriteTokens");
        }
        match kind {
            "agent_message_chunk" => {
                let Some(piece) = update["content"]["text"].as_str() else {
                    return Vec::new();
                };
                let id = text(&update["messageId"]);
                let answer = match self.answer.take() {
                    Some((same, mut so_far)) if same == id => {
                        so_far.push_str(piece);
                        (same, so_far)
                    }
                    _ => (id, piece.to_owned()),
                };
                let whole = answer.1.clone();
                self.answer = Some(answer);
                vec![Event::Text { text: whole }]
            }
            "tool_call" => {
                let name = text(&update["title"])
                    .or_else(|| text(&update["kind"]))
                    .unwrap_or_else(|| "tool".to_owned());
                if let Some(id) = text(&update["toolCallId"]) {
                    self.tools.insert(id, name.clone());
                }
                let mut events = vec![Event::ToolStarted {
                    name: name.clone(),
                    title: None,
                }];
                events.extend(self.tool_end(&name, update));
                events
            }
            "tool_call_update" => {
                let id = text(&update["toolCallId"]).unwrap_or_default();
                let name = self
                    .tools
                    .get(&id)
                    .cloned()
                    .or_else(|| text(&update["kind"]))
                    .unwrap_or_else(|| "tool".to_owned());
                let events = self.tool_end(&name, update);
                if !events.is_empty() {
                    self.tools.remove(&id);
                }
                events
            }
            "usage_update" => {
                if let Some(amount) = update["cost"]["amount"].as_f64() {
                    self.cost_now = Some(amount);
                }
                Vec::new()
            }
            "agent_thought_chunk"
            | "user_message_chunk"
            | "plan"
            | "available_commands_update"
            | "current_mode_update"
            | "config_option_update"
            | "session_info_update" => Vec::new(),
            other => vec![Event::Unknown {
                kind: other.to_owned(),
            }],
        }
    }

    /// The end of a tool call, when `update` reports one.
    fn tool_end(&self, name: &str, update: &Value) -> Vec<Event> {
        let status = match update["status"].as_str() {
            Some("completed") => ToolStatus::Completed,
            Some("failed") => ToolStatus::Error,
            _ => return Vec::new(),
        };
        let output = update["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["content"]["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if status == ToolStatus::Error && self.refusal.is_some_and(|refused| refused(&output)) {
            let line = output.trim().lines().next().unwrap_or_default();
            return vec![Event::PermissionRejected {
                tool: name.to_owned(),
                message: line.chars().take(REFUSAL_CHARS).collect(),
            }];
        }
        vec![Event::Tool {
            name: name.to_owned(),
            status,
            title: text(&update["title"]).filter(|title| title != name),
            error: (status == ToolStatus::Error && !output.is_empty()).then_some(output),
        }]
    }

    /// The turn's tokens, as each agent reports them: Gemini CLI the turn's sum in the
    /// answer's `_meta.quota.token_count`; Qwen Code each request on the way (summed here);
    /// OpenCode the answer's `usage` (its last request's only: docs/agents/acp-measured.md).
    fn turn_tokens(&self, result: &Value) -> Usage {
        if let Some(recorded) = self.recorded {
            return recorded;
        }
        let quota = &result["_meta"]["quota"]["token_count"];
        if quota.is_object() {
            return Usage {
                input: quota["input_tokens"].as_u64().unwrap_or(0),
                output: quota["output_tokens"].as_u64().unwrap_or(0),
                ..Usage::default()
            };
        }
        if let Some(sum) = self.per_request {
            return sum;
        }
        let usage = &result["usage"];
        let tokens = |key: &str| usage[key].as_u64().unwrap_or(0);
        Usage {
            input: tokens("inputTokens"),
            output: tokens("outputTokens"),
            reasoning: tokens("thoughtTokens"),
            cache_read: tokens("cachedReadTokens"),
            cache_write: tokens("cachedWriteTokens"),
            ..Usage::default()
        }
    }

    fn response(&mut self, result: Result<Value, String>) -> Vec<Event> {
        self.answer = None;
        match result {
            Ok(result) => {
                let Some(reason) = text(&result["stopReason"]) else {
                    return Vec::new();
                };
                let cost = match (self.cost_now, self.cost_before) {
                    (Some(now), Some(before)) => Some((now - before).max(0.0)),
                    (Some(now), None) => Some(now),
                    _ => None,
                };
                let usage = Usage {
                    cost_usd: cost,
                    mode: UsageMode::RoundTotal,
                    ..self.turn_tokens(&result)
                };
                vec![
                    Event::StepFinished {
                        reason: Some(reason),
                        usage,
                    },
                    Event::Ended,
                ]
            }
            Err(message) => vec![
                Event::Error {
                    name: "AgentError".to_owned(),
                    message,
                    status_code: None,
                    retryable: None,
                },
                Event::Ended,
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::summarize_stream;
    use ganger_events::RoundSummary;

    /// OpenCode 1.18.33's turn that writes a file, as measured (docs/agents/acp-measured.md),
    /// trimmed, behind ganger's turn line.
    const TURN: &str = r#"{"ganger":"turn","session":"ses_1","cost_before":0.0076}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"write","kind":"edit","status":"pending","locations":[],"rawInput":{}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","kind":"edit","title":"write","rawInput":{"content":"hello\n","filePath":"hello.txt"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","title":"hello.txt","content":[{"type":"content","content":{"type":"text","text":"Wrote file successfully."}}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Wrote it.\n"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"DONE: hello.txt written"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ses_1","update":{"sessionUpdate":"usage_update","used":2416,"size":128000,"cost":{"amount":0.0226,"currency":"USD"}}}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"inputTokens":2416,"outputTokens":25,"totalTokens":2441},"_meta":{}}}
"#;

    fn summary(stream: &str) -> RoundSummary {
        summarize_stream(&mut AcpStream::default(), stream.as_bytes())
    }

    #[test]
    fn a_turn_gives_the_session_the_whole_answer_the_call_and_the_rounds_own_cost() {
        let summary = summary(TURN);
        assert_eq!(summary.session.as_deref(), Some("ses_1"));
        assert_eq!(
            summary.answer.as_deref(),
            Some("Wrote it.\nDONE: hello.txt written")
        );
        assert_eq!(summary.done.as_deref(), Some("DONE: hello.txt written"));
        assert_eq!(summary.tool_calls, 1);
        assert_eq!(summary.finish.as_deref(), Some("end_turn"));
        assert!(summary.ended);
        assert_eq!(summary.tokens.input, 2416);
        assert_eq!(summary.tokens.output, 25);
        let cost = summary.cost_usd.unwrap();
        assert!((cost - 0.015).abs() < 1e-9, "{cost}");
        assert_eq!(summary.unknown, 0);
        assert_eq!(summary.malformed, 0);
    }

    #[test]
    fn tokens_come_from_where_each_agent_puts_them() {
        let gemini = r#"{"ganger":"turn","session":"g"}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":13430,"output_tokens":69}}}}}
"#;
        let read = summary(gemini);
        assert_eq!((read.tokens.input, read.tokens.output), (13430, 69));
        let qwen = r#"{"ganger":"turn","session":"q"}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"q","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""},"_meta":{"usage":{"inputTokens":6024,"outputTokens":23,"totalTokens":6047,"thoughtTokens":0,"cachedReadTokens":0},"durationMs":554}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"q","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""},"_meta":{"usage":{"inputTokens":6046,"outputTokens":25,"totalTokens":6071,"thoughtTokens":0,"cachedReadTokens":0}}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
"#;
        let read = summary(qwen);
        assert_eq!((read.tokens.input, read.tokens.output), (12070, 48));
    }

    #[test]
    fn a_stored_round_is_read_by_the_parser_that_wrote_it() {
        let warm = summarize_stream(
            &mut WarmOrCold::new(Box::new(crate::opencode::OpenCodeStream), None),
            TURN.as_bytes(),
        );
        assert_eq!(warm, summary(TURN));
        let cold = br#"{"type":"step_start","sessionID":"ses_9","part":{"type":"step-start"}}
"#;
        let read = summarize_stream(
            &mut WarmOrCold::new(Box::new(crate::opencode::OpenCodeStream), None),
            cold,
        );
        assert_eq!(
            read,
            summarize_stream(&mut crate::opencode::OpenCodeStream, cold)
        );
        assert_eq!(read.session.as_deref(), Some("ses_9"));
    }

    #[test]
    fn a_refused_call_a_failed_call_and_an_error_are_told() {
        let stream = r#"{"ganger":"turn","session":"s"}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"pending"}}}
{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c1"},"options":[]}}
{"ganger":"permission","tool":"bash","kind":"execute","input":{"command":"git push"},"decision":"deny","rule":"deny \"git push\" ([permissions] in ganger.toml)"}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"rejected"}}]}}}
not json at all
{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"model unreachable"}}
"#;
        let summary = summary(stream);
        assert_eq!(summary.rejection_count, 1);
        assert!(
            summary.rejections[0].contains("git push"),
            "{:?}",
            summary.rejections
        );
        assert_eq!(summary.tool_errors, 1);
        assert_eq!(summary.errors, ["AgentError: model unreachable"]);
        assert_eq!(summary.malformed, 1);
        assert!(summary.ended);
    }

    #[test]
    fn running_totals_count_while_the_turn_runs_and_the_turns_own_replace_them() {
        let running = r#"{"ganger":"turn","session":"s"}
{"ganger":"usage","input":2395,"output":12,"reasoning":0,"cache_read":0,"cache_write":0,"running":true}
"#;
        let so_far = summary(running);
        assert_eq!((so_far.tokens.input, so_far.tokens.output), (2395, 12));
        assert_eq!(so_far.steps_finished, 0);
        assert!(!so_far.ended);
        let ended = format!(
            "{running}{}",
            r#"{"ganger":"usage","input":4815,"output":53,"reasoning":0,"cache_read":7,"cache_write":0}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":2419,"outputTokens":28,"totalTokens":2447}}}
"#
        );
        let ended = summary(&ended);
        assert_eq!((ended.tokens.input, ended.tokens.output), (4815, 53));
        assert_eq!(ended.steps_finished, 1);
    }

    #[test]
    fn the_tokens_the_host_read_from_the_agents_records_stand_for_the_turns() {
        // OpenCode's answer holds its last request's usage; the host's line has both steps'.
        let stream = r#"{"ganger":"turn","session":"s"}
{"ganger":"usage","input":4815,"output":53,"reasoning":0,"cache_read":7,"cache_write":0}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":2419,"outputTokens":28,"totalTokens":2447}}}
"#;
        let tokens = summary(stream).tokens;
        assert_eq!(
            (tokens.input, tokens.output, tokens.cache_read),
            (4815, 53, 7)
        );
        let without = stream
            .lines()
            .filter(|l| !l.contains("usage\","))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(summary(&without).tokens.input, 2419);
    }

    #[test]
    fn a_failed_call_the_agents_guard_refused_is_a_refusal_where_its_adapter_says_so() {
        // Gemini CLI over ACP, a write outside its workspace (recorded from 0.61.0).
        let stream = r#"{"ganger":"turn","session":"s"}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"w1","status":"in_progress","title":"write_file","kind":"edit"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"w1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Path not in workspace: Attempted path \"/repo/refused.txt\" resolves outside the allowed workspace directories: /repo-agent-no"}}],"kind":"edit"}}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}
"#;
        let plain = summary(stream);
        assert_eq!((plain.rejection_count, plain.tool_errors), (0, 1));
        let gemini = summarize_stream(
            &mut AcpStream::new(crate::registry::adapter("gemini").unwrap().warm_refusal()),
            stream.as_bytes(),
        );
        assert_eq!((gemini.rejection_count, gemini.tool_errors), (1, 0));
        assert!(
            gemini.rejections[0].starts_with("write_file: Path not in workspace: Attempted path"),
            "{:?}",
            gemini.rejections
        );
    }

    #[test]
    fn in_gangers_sandbox_the_agents_guard_counts_as_the_sandbox_would_and_gangers_rules_still_count()
     {
        use crate::{AgentExit, Permission};
        // Gemini CLI kept warm refuses a write outside its workspace, then answers.
        let guard = r#"{"ganger":"turn","session":"s"}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"w1","status":"failed","title":"write_file","content":[{"type":"content","content":{"type":"text","text":"Path not in workspace: Attempted path \"/repo/x.txt\" resolves outside the allowed workspace directories: /repo-agent-t1"}}],"kind":"edit"}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I could not write there."}}}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}
"#;
        let gemini = crate::registry::adapter("gemini").unwrap();
        let read = summarize_stream(&mut *gemini.warm_stream_parser(), guard.as_bytes());
        assert_eq!(read.rejection_count, 1);
        let plain = gemini.warm_verdict(&read, AgentExit::Code(0), Permission::Write, false);
        assert!(
            !plain.done,
            "refused by its guard where nothing else stops it"
        );
        let boxed = gemini.warm_verdict(&read, AgentExit::Code(0), Permission::Write, true);
        assert!(boxed.done, "{boxed:?}");
        // A refusal of ganger's own rules fails the round in a sandbox too.
        let rule = guard.replace(
            r#"Path not in workspace: Attempted path \"/repo/x.txt\" resolves outside the allowed workspace directories: /repo-agent-t1"#,
            "rejected",
        );
        let rule = rule.replacen(
            "\n",
            "\n{\"ganger\":\"permission\",\"tool\":\"write_file\",\"kind\":\"edit\",\"input\":{},\"decision\":\"deny\",\"rule\":\"deny \\\"edit\\\" ([permissions] in ganger.toml)\"}\n",
            1,
        );
        let read = summarize_stream(&mut *gemini.warm_stream_parser(), rule.as_bytes());
        assert_eq!(read.rejection_count, 1, "{read:?}");
        let boxed = gemini.warm_verdict(&read, AgentExit::Code(0), Permission::Write, true);
        assert!(!boxed.done, "{boxed:?}");
        assert!(
            boxed.reason.unwrap().contains("refused by ganger"),
            "the rule is named"
        );
    }
}
