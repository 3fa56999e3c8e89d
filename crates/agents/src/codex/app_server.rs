//! Codex kept warm: one long-lived `codex app-server` per task, spoken to in its own JSON-RPC
//! (one object a line, no `"jsonrpc"` member), measured in
//! docs/agents/warm-codex-claude-measured.md, part A. Codex's own protocol rather than ACP: Zed's
//! `codex-acp` embeds an older Codex core of its own, reports only the context's fill as usage
//! and neither exits at stdin's end nor takes its native child with it on SIGTERM.
//!
//! - Start: `initialize` (`clientInfo`), then the `initialized` notification.
//! - A session is a thread: `thread/start {cwd, approvalPolicy}` for a new one, `thread/resume
//!   {threadId, cwd, approvalPolicy, excludeTurns}` to continue one; the thread id is the one
//!   `codex exec resume` takes, in both directions, so warm and cold rounds share a session.
//! - A round is `turn/start`; it is answered at once with the turn's id, and ends with the
//!   `turn/completed` notification (`completed`, `failed` with its error, `interrupted`).
//! - Permissions: threads run with `approvalPolicy: "untrusted"` (Codex 0.171.0 refuses it as a
//!   `-c` setting, but takes it per thread), under the sandbox of the cold round: Codex asks
//!   before every patch and every command it does not know to be harmless
//!   (`item/fileChange/requestApproval`, `item/commandExecution/requestApproval`) and waits;
//!   ganger answers `accept` or `decline` from the round's policy. A declined call writes
//!   nothing and the model is told. A patch's request names only its item: its paths are in the
//!   `item/started` before it.
//! - Cancel: `turn/interrupt {threadId, turnId}`; the turn ends `interrupted` within about 15 ms,
//!   but **a running command is not stopped**: the host stops the process after a cancelled turn.
//!
//! The round's stream is written in `codex exec --json`'s dialect ([`TurnReader`] translates each
//! notification), so that the cold reader and verdict judge a warm round as a cold one; the
//! running token totals go as ganger `usage` lines, so that a budget stops a turn mid-way.

use crate::acp::GANGER_KEY;
use crate::acp::protocol::{self, Incoming, PermissionAsk};
use crate::adapter::{CommandPlan, PlanError, RoundRequest};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The approval policy of a warm thread: Codex asks ganger before every call that changes
/// anything.
const APPROVALS: &str = "untrusted";

/// The variable that keeps the app server's remote control off (Codex 0.171.0).
const REMOTE_CONTROL_OFF: &str = "CODEX_INTERNAL_APP_SERVER_REMOTE_CONTROL_DISABLED";

/// The command of Codex kept warm for rounds like `request`: the cold round's model,
/// sandbox, settings and environment, in `app-server` mode.
pub fn warm_plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let mut settings = super::command::settings(request)?;
    if let Some(model) = request.model {
        let model = super::overrides::flatten(&json!({ "model": model })).map_err(|reason| {
            PlanError::Config {
                agent: "codex",
                reason,
            }
        })?;
        settings.splice(0..0, model);
    }
    let mut args = vec!["app-server".to_owned()];
    for item in settings {
        args.extend(["-c".to_owned(), item]);
    }
    // Without a ChatGPT login the app server asks every second whether remote control may
    // start, and logs it into its log database: 300 kB written every 10 s, which ganger's
    // stall watch took for work (a hung model's round never stalled). Remote control is
    // nothing ganger uses.
    let env = vec![(REMOTE_CONTROL_OFF.to_owned(), "1".to_owned())];
    let mut plan = CommandPlan::new(args, env, None);
    if let Some(tmp) = super::command::private_tmp(request) {
        plan.env
            .push(("TMPDIR".to_owned(), tmp.to_string_lossy().into_owned()));
        plan.dirs.push(tmp);
    }
    Ok(plan)
}

/// The `initialize` request, as request `id`.
pub fn initialize(id: u64) -> Value {
    json!({"id": id, "method": "initialize", "params": {
        "clientInfo": {"name": "ganger", "title": null, "version": env!("CARGO_PKG_VERSION")},
        "capabilities": {"experimentalApi": false}}})
}

/// The notification that follows `initialize`'s answer.
pub fn initialized() -> Value {
    json!({"method": "initialized"})
}

/// The request for a new thread working in `cwd`.
pub fn thread_start(id: u64, cwd: &std::path::Path) -> Value {
    json!({"id": id, "method": "thread/start",
        "params": {"cwd": cwd, "approvalPolicy": APPROVALS}})
}

/// The request that continues thread `thread` in `cwd` (without replaying its turns).
pub fn thread_resume(id: u64, thread: &str, cwd: &std::path::Path) -> Value {
    json!({"id": id, "method": "thread/resume", "params": {"threadId": thread, "cwd": cwd,
        "approvalPolicy": APPROVALS, "excludeTurns": true}})
}

/// The thread a `thread/start` or `thread/resume` answer names.
pub fn thread_of(answer: &Value) -> Option<String> {
    answer["thread"]["id"].as_str().map(str::to_owned)
}

/// The request that sends `prompt` into thread `thread` as a new turn.
pub fn turn_start(id: u64, thread: &str, prompt: &str) -> Value {
    json!({"id": id, "method": "turn/start", "params": {"threadId": thread,
        "input": [{"type": "text", "text": prompt, "text_elements": []}]}})
}

/// The request that interrupts turn `turn` of thread `thread`.
pub fn turn_interrupt(id: u64, thread: &str, turn: &str) -> Value {
    json!({"id": id, "method": "turn/interrupt", "params": {"threadId": thread, "turnId": turn}})
}

/// The answer to an approval request: `accept` or `decline`.
pub fn approval_answer(id: &Value, allow: bool) -> Value {
    json!({"id": id, "result": {"decision": if allow { "accept" } else { "decline" }}})
}

/// The answer to a request ganger does not serve: an approval is declined, anything else is
/// an unknown method.
pub fn refusal(id: &Value, method: &str) -> Value {
    if method.ends_with("/requestApproval") {
        approval_answer(id, false)
    } else {
        json!({"id": id, "error": {"code": -32601,
            "message": format!("{method} is not served by ganger's warm host")}})
    }
}

/// What one line of the app server is to its host during a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// Lines for the round's stream, in `codex exec --json`'s dialect (and ganger's running
    /// `usage`).
    pub stream: Vec<Value>,
    /// What the host does.
    pub then: Then,
}

/// What the host does after a line.
#[derive(Debug, Clone, PartialEq)]
pub enum Then {
    Nothing,
    /// The turn is over.
    Ended,
    /// Codex asks whether a call may run: answer with [`approval_answer`].
    Ask {
        id: Value,
        ask: PermissionAsk,
    },
    /// Send this to the app server (a refused request, or an interrupt that waited for the
    /// turn's id).
    Send(Value),
}

impl Seen {
    fn stream(lines: Vec<Value>) -> Seen {
        Seen {
            stream: lines,
            then: Then::Nothing,
        }
    }
    fn then(then: Then) -> Seen {
        Seen {
            stream: Vec::new(),
            then,
        }
    }
}

/// Reads one turn's lines of the app server into the round's stream.
#[derive(Debug)]
pub struct TurnReader {
    thread: String,
    /// The id of the `turn/start` request.
    prompt_id: u64,
    /// The turn's id, once Codex named it.
    turn: Option<String>,
    /// An interrupt asked for before the turn had an id: its request id.
    interrupt: Option<u64>,
    /// The changes of the patches seen starting, by item id (their approval names only it).
    changes: HashMap<String, Value>,
    /// The turn's tokens so far: the sum of its requests' (`last`).
    running: Tokens,
    /// The thread's totals at the last report (cumulative over its turns, cold ones included).
    total: Option<Tokens>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Tokens {
    input: u64,
    cached: u64,
    cache_write: u64,
    output: u64,
    reasoning: u64,
}

impl Tokens {
    fn of(value: &Value) -> Tokens {
        let count = |key: &str| value[key].as_u64().unwrap_or(0);
        Tokens {
            input: count("inputTokens"),
            cached: count("cachedInputTokens"),
            cache_write: count("cacheWriteInputTokens"),
            output: count("outputTokens"),
            reasoning: count("reasoningOutputTokens"),
        }
    }

    fn add(&mut self, other: Tokens) {
        self.input += other.input;
        self.cached += other.cached;
        self.cache_write += other.cache_write;
        self.output += other.output;
        self.reasoning += other.reasoning;
    }

    /// In `exec --json`'s `usage` shape.
    fn exec_usage(self) -> Value {
        json!({"input_tokens": self.input, "cached_input_tokens": self.cached,
            "cache_write_input_tokens": self.cache_write, "output_tokens": self.output,
            "reasoning_output_tokens": self.reasoning})
    }
}

impl TurnReader {
    /// A reader of the turn whose `turn/start` went into `thread` as request `prompt_id`.
    pub fn new(thread: &str, prompt_id: u64) -> TurnReader {
        TurnReader {
            thread: thread.to_owned(),
            prompt_id,
            turn: None,
            interrupt: None,
            changes: HashMap::new(),
            running: Tokens::default(),
            total: None,
        }
    }

    /// The request that interrupts the turn, as request `id`; `None` while the turn has no id
    /// yet (it is sent as soon as Codex names it).
    pub fn interrupt(&mut self, id: u64) -> Option<Value> {
        match &self.turn {
            Some(turn) => Some(turn_interrupt(id, &self.thread, turn)),
            None => {
                self.interrupt = Some(id);
                None
            }
        }
    }

    /// Reads one line of the app server.
    pub fn see(&mut self, line: &[u8]) -> Seen {
        // The same JSON-RPC shapes as ACP's, without the `"jsonrpc"` member.
        match protocol::classify(line) {
            Some(Incoming::Request { id, method, params }) => self.request(id, &method, &params),
            Some(Incoming::Notification { method, params }) => self.notification(&method, &params),
            Some(Incoming::Response {
                id: Some(id),
                result,
            }) if id == self.prompt_id => {
                // `turn/start`'s answer names the turn (a refused one never ran).
                if let Some(turn) = result
                    .ok()
                    .and_then(|r| r["turn"]["id"].as_str().map(str::to_owned))
                {
                    self.turn = Some(turn);
                }
                match (self.interrupt.take(), &self.turn) {
                    (Some(at), Some(turn)) => {
                        Seen::then(Then::Send(turn_interrupt(at, &self.thread, turn)))
                    }
                    _ => Seen::stream(Vec::new()),
                }
            }
            _ => Seen::stream(Vec::new()),
        }
    }

    fn request(&mut self, id: Value, method: &str, params: &Value) -> Seen {
        let ask = match method {
            "item/fileChange/requestApproval" => {
                let item = params["itemId"].as_str().unwrap_or_default();
                let changes = self.changes.get(item).cloned().unwrap_or(Value::Null);
                let paths = paths_of(&changes);
                PermissionAsk {
                    tool: super::PATCH_TOOL.to_owned(),
                    kind: Some("edit".to_owned()),
                    input: json!({"changes": changes}),
                    paths,
                    options: Vec::new(),
                }
            }
            "item/commandExecution/requestApproval" => {
                let command = params["command"].as_str().unwrap_or_default();
                PermissionAsk {
                    tool: super::SHELL_TOOL.to_owned(),
                    kind: Some("execute".to_owned()),
                    input: json!({"command": shell_body(command), "cwd": params["cwd"]}),
                    paths: Vec::new(),
                    options: Vec::new(),
                }
            }
            _ => return Seen::then(Then::Send(refusal(&id, method))),
        };
        Seen::then(Then::Ask { id, ask })
    }

    fn notification(&mut self, method: &str, params: &Value) -> Seen {
        // Another thread's or turn's notification is not this round's.
        if params["threadId"]
            .as_str()
            .is_some_and(|thread| thread != self.thread)
        {
            return Seen::stream(Vec::new());
        }
        match method {
            "turn/started" => {
                if self.turn.is_none() {
                    self.turn = params["turn"]["id"].as_str().map(str::to_owned);
                }
                Seen::stream(vec![
                    json!({"type": "thread.started", "thread_id": self.thread}),
                    json!({"type": "turn.started"}),
                ])
            }
            "item/started" | "item/completed" => {
                let item = &params["item"];
                if item["type"] == "fileChange"
                    && let Some(id) = item["id"].as_str()
                {
                    self.changes.insert(id.to_owned(), item["changes"].clone());
                }
                let kind = if method == "item/started" {
                    "item.started"
                } else {
                    "item.completed"
                };
                Seen::stream(
                    exec_item(item)
                        .map(|item| json!({"type": kind, "item": item}))
                        .into_iter()
                        .collect(),
                )
            }
            "thread/tokenUsage/updated" => {
                let usage = &params["tokenUsage"];
                self.running.add(Tokens::of(&usage["last"]));
                self.total = Some(Tokens::of(&usage["total"]));
                let t = self.running;
                Seen::stream(vec![json!({GANGER_KEY: "usage", "running": true,
                    "input": t.input.saturating_sub(t.cached), "output": t.output,
                    "reasoning": t.reasoning, "cache_read": t.cached,
                    "cache_write": t.cache_write})])
            }
            // A connection notice while Codex retries; the last error is the failed turn's.
            "error" if params["willRetry"] == true => {
                let error = &params["error"];
                // As `exec --json` words it: `Reconnecting... (details)`.
                let message = match error["additionalDetails"].as_str() {
                    Some(details) => format!(
                        "{} ({details})",
                        error["message"].as_str().unwrap_or_default()
                    ),
                    None => error["message"].as_str().unwrap_or_default().to_owned(),
                };
                Seen::stream(vec![json!({"type": "error", "message": message})])
            }
            "turn/completed" => {
                let turn = &params["turn"];
                if self.turn.as_deref().is_some_and(|id| turn["id"] != id) {
                    return Seen::stream(Vec::new());
                }
                let line = match turn["status"].as_str() {
                    Some("completed") => json!({"type": "turn.completed",
                        "usage": self.total.unwrap_or(self.running).exec_usage()}),
                    Some("interrupted") => json!({"type": "turn.failed",
                        "error": {"message": "the turn was interrupted"}}),
                    _ => json!({"type": "turn.failed", "error": {"message":
                        error_text(&turn["error"])}}),
                };
                Seen {
                    stream: vec![line],
                    then: Then::Ended,
                }
            }
            _ => Seen::stream(Vec::new()),
        }
    }
}

/// A failed turn's error as text: its message, and the details Codex adds.
fn error_text(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or_default();
    match error["additionalDetails"].as_str() {
        Some(details) if !details.is_empty() && !message.contains(details) => {
            format!("{message}: {details}")
        }
        _ if message.is_empty() => "the turn failed without a message".to_owned(),
        _ => message.to_owned(),
    }
}

/// The paths a patch's `changes` name.
fn paths_of(changes: &Value) -> Vec<String> {
    changes
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|change| change["path"].as_str().map(str::to_owned))
        .collect()
}

/// An app-server item in `exec --json`'s shape (snake-case type and fields), when the cold
/// reader reads its kind.
fn exec_item(item: &Value) -> Option<Value> {
    let kind = match item["type"].as_str()? {
        "agentMessage" => "agent_message",
        "commandExecution" => "command_execution",
        "fileChange" => "file_change",
        "mcpToolCall" => "mcp_tool_call",
        "webSearch" => "web_search",
        "reasoning" => "reasoning",
        _ => return None,
    };
    let mut out = json!({"id": item["id"], "type": kind});
    let copy = |out: &mut Value, from: &str, to: &str| {
        if let Some(value) = item.get(from).filter(|v| !v.is_null()) {
            out[to] = value.clone();
        }
    };
    copy(&mut out, "text", "text");
    copy(&mut out, "command", "command");
    copy(&mut out, "exitCode", "exit_code");
    copy(&mut out, "aggregatedOutput", "aggregated_output");
    copy(&mut out, "changes", "changes");
    copy(&mut out, "server", "server");
    copy(&mut out, "tool", "tool");
    copy(&mut out, "query", "query");
    copy(&mut out, "error", "error");
    if let Some(status) = item["status"].as_str() {
        out["status"] = Value::from(match status {
            "inProgress" => "in_progress",
            // Declined by ganger: it did not run (the refusal is ganger's line).
            "declined" => "failed",
            other => other,
        });
    }
    Some(out)
}

/// The command inside Codex's shell wrapper (`/bin/bash -lc 'git push'` is `git push`), which
/// `[permissions]` patterns are written against; the whole text when it has no wrapper.
fn shell_body(command: &str) -> String {
    for flag in [" -lc ", " -c "] {
        if let Some((shell, body)) = command.split_once(flag)
            && !shell.contains(' ')
            && shell.ends_with("sh")
        {
            return unquote(body).unwrap_or_else(|| body.to_owned());
        }
    }
    command.to_owned()
}

/// A single-quoted shell word's text (`'it'\''s'` is `it's`); `None` when `word` is not one.
fn unquote(word: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some(tail) = rest.strip_prefix("\\'") {
            out.push('\'');
            rest = tail;
            continue;
        }
        let tail = rest.strip_prefix('\'')?;
        let end = tail.find('\'')?;
        out.push_str(&tail[..end]);
        rest = &tail[end + 1..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_inside_the_shell_wrapper_is_what_rules_match() {
        assert_eq!(
            shell_body("/bin/bash -lc 'git push origin main'"),
            "git push origin main"
        );
        assert_eq!(shell_body("/bin/bash -lc 'echo it'\\''s'"), "echo it's");
        assert_eq!(shell_body("bash -c 'ls'"), "ls");
        assert_eq!(shell_body("git status"), "git status");
        // Not a single-quoted word: kept as written.
        assert_eq!(shell_body("/bin/bash -lc ls"), "ls");
    }
}
