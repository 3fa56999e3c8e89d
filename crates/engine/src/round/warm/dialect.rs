//! What differs between the protocols a warm host speaks to its agent
//! ([`ganger_agents::WarmProtocol`]): the message that sends a prompt or cancels a turn, what
//! an agent's line is to the host (the turn's end, a permission question, a request to refuse),
//! what of it goes into the round's stream, and the answers. The host's loop is the same for
//! all of them; a turn's [`TurnDialect`] holds what the host remembers of it between lines.

use super::policy::Decision;
use ganger_agents::WarmProtocol;
use ganger_agents::acp::BY_GANGER;
use ganger_agents::acp::protocol::{self, Incoming, PermissionAsk};
use ganger_agents::app_server::{self, Then, TurnReader};
use ganger_agents::stream_json_control as control;
use serde_json::Value;
use std::collections::BTreeSet;

/// What one line of the agent is to the host during a turn.
pub(crate) enum Seen {
    /// The turn is over (ACP: the prompt's answer; stream-json: the `result` line; an app
    /// server: the turn's completion); `answered` when it is ACP's successful answer, which
    /// some agents leave without the turn's tokens (the host gives them first).
    TurnEnded { answered: bool },
    /// The agent asks whether a tool may run; [`answer`] says how to reply.
    Ask(PermissionAsk, Asker),
    /// Send this to the agent: the refusal of another request of its, or a cancel that
    /// waited for the turn's id.
    Reply(Value),
    /// The session's running cost, as the agent reports it (ACP's `usage_update`).
    Cost(f64),
    /// Nothing for the host to do.
    Other,
}

/// What of an agent's line goes into the round's stream.
pub(crate) enum Pass {
    /// The line as it is.
    Line,
    /// Nothing (stream-json's control messages: ganger writes its own line for each decision).
    Nothing,
    /// These lines instead (an app server's turn, in the cold round's dialect).
    Lines(Vec<Value>),
}

/// Who asked, to address the answer.
pub(crate) enum Asker {
    Acp(Value),
    Control(String),
    AppServer(Value),
}

/// One turn as its protocol sees it.
pub(crate) enum TurnDialect {
    Acp {
        prompt_id: u64,
        /// The paths of the edits allowed in the turn: an ACP agent may then send each one's
        /// new text to write (`fs/write_text_file`), which ganger notes without writing.
        allowed_edits: BTreeSet<String>,
    },
    StreamJson,
    AppServer(TurnReader),
}

impl TurnDialect {
    /// The turn whose prompt went into `session` as request `prompt_id`.
    pub fn new(kind: WarmProtocol, prompt_id: u64, session: &str) -> TurnDialect {
        match kind {
            WarmProtocol::Acp => TurnDialect::Acp {
                prompt_id,
                allowed_edits: BTreeSet::new(),
            },
            WarmProtocol::StreamJsonControl => TurnDialect::StreamJson,
            WarmProtocol::AppServer => TurnDialect::AppServer(TurnReader::new(session, prompt_id)),
        }
    }

    /// Reads `line` of the agent during the turn.
    pub fn see(&mut self, line: &[u8]) -> (Seen, Pass) {
        match self {
            TurnDialect::Acp {
                prompt_id,
                allowed_edits,
            } => {
                let seen = match protocol::classify(line) {
                    Some(Incoming::Request { id, method, params }) => match method.as_str() {
                        "session/request_permission" => {
                            Seen::Ask(PermissionAsk::of(&params), Asker::Acp(id))
                        }
                        "fs/write_text_file"
                            if params["path"]
                                .as_str()
                                .is_some_and(|path| allowed_edits.contains(path)) =>
                        {
                            Seen::Reply(protocol::proposed_edit_noted(&id))
                        }
                        _ => Seen::Reply(protocol::method_not_found(&id, &method)),
                    },
                    Some(Incoming::Notification { params, .. }) => {
                        match params["update"]["cost"]["amount"].as_f64() {
                            Some(cost) => Seen::Cost(cost),
                            None => Seen::Other,
                        }
                    }
                    Some(Incoming::Response {
                        id: Some(id),
                        result,
                    }) if id == *prompt_id => Seen::TurnEnded {
                        answered: result.is_ok(),
                    },
                    _ => Seen::Other,
                };
                (seen, Pass::Line)
            }
            TurnDialect::StreamJson => match control::classify(line) {
                control::Line::Result => (Seen::TurnEnded { answered: false }, Pass::Line),
                control::Line::Stream => (Seen::Other, Pass::Line),
                control::Line::Ask { request_id, ask } => {
                    (Seen::Ask(ask, Asker::Control(request_id)), Pass::Nothing)
                }
                control::Line::Request { request_id } => (
                    Seen::Reply(control::unsupported(&request_id)),
                    Pass::Nothing,
                ),
                control::Line::Answer => (Seen::Other, Pass::Nothing),
            },
            TurnDialect::AppServer(reader) => {
                let seen = reader.see(line);
                let then = match seen.then {
                    Then::Nothing => Seen::Other,
                    Then::Ended => Seen::TurnEnded { answered: false },
                    Then::Ask { id, ask } => Seen::Ask(ask, Asker::AppServer(id)),
                    Then::Send(message) => Seen::Reply(message),
                };
                (then, Pass::Lines(seen.stream))
            }
        }
    }

    /// Remembers a call the policy allowed: an edit's paths (as given, and from `worktree`
    /// when relative) are then expected back as `fs/write_text_file` (docs/agents/acp-measured.md), and noted.
    pub fn allowed(&mut self, ask: &PermissionAsk, worktree: &std::path::Path) {
        if let TurnDialect::Acp { allowed_edits, .. } = self
            && ask.kind.as_deref() == Some("edit")
        {
            for path in &ask.paths {
                allowed_edits.insert(path.clone());
                allowed_edits.insert(worktree.join(path).to_string_lossy().into_owned());
            }
        }
    }

    /// The message that cancels the turn running in `session`, as request `id`; `None` when
    /// it must wait (an app server's turn not yet named: it goes when the turn is).
    pub fn cancel(&mut self, id: u64, session: &str) -> Option<Value> {
        match self {
            TurnDialect::Acp { .. } => Some(protocol::cancel(session)),
            TurnDialect::StreamJson => Some(control::interrupt(&format!("ganger-cancel-{id}"))),
            TurnDialect::AppServer(reader) => reader.interrupt(id),
        }
    }

    /// Whether a cancelled turn can leave the agent's work running after it ended (an app
    /// server's interrupt does not stop a running command): then the host stops the agent.
    pub fn cancel_leaves_work(&self) -> bool {
        matches!(self, TurnDialect::AppServer(_))
    }
}

/// The reply to a permission question.
pub(crate) fn answer(asker: &Asker, ask: &PermissionAsk, decision: &Decision) -> Value {
    match asker {
        Asker::Acp(id) => protocol::permission_answer(id, ask.option(decision.allow)),
        Asker::Control(request_id) => control::permission_answer(
            request_id,
            ask,
            decision.allow,
            &format!("{BY_GANGER} ({})", decision.rule),
        ),
        Asker::AppServer(id) => app_server::approval_answer(id, decision.allow),
    }
}

/// The message that sends `prompt` into `session` as request `id`.
pub(crate) fn prompt(kind: WarmProtocol, id: u64, session: &str, prompt: &str) -> Value {
    match kind {
        WarmProtocol::Acp => protocol::prompt(id, session, prompt),
        WarmProtocol::StreamJsonControl => control::user_message(prompt),
        WarmProtocol::AppServer => app_server::turn_start(id, session, prompt),
    }
}

/// The answer to a request of the agent while no turn runs (nothing may run between rounds),
/// if the line is one.
pub(crate) fn refuse_idle(kind: WarmProtocol, line: &[u8]) -> Option<Value> {
    match kind {
        WarmProtocol::Acp => match protocol::classify(line) {
            Some(Incoming::Request { id, method, .. }) => {
                Some(if method == "session/request_permission" {
                    protocol::permission_answer(&id, None)
                } else {
                    protocol::method_not_found(&id, &method)
                })
            }
            _ => None,
        },
        WarmProtocol::StreamJsonControl => match control::classify(line) {
            control::Line::Ask { request_id, ask } => Some(control::permission_answer(
                &request_id,
                &ask,
                false,
                &format!("{BY_GANGER} (no round is running)"),
            )),
            control::Line::Request { request_id } => Some(control::unsupported(&request_id)),
            _ => None,
        },
        WarmProtocol::AppServer => match protocol::classify(line) {
            Some(Incoming::Request { id, method, .. }) => Some(app_server::refusal(&id, &method)),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write_request(path: &str) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": 7, "method": "fs/write_text_file",
            "params": {"sessionId": "s", "path": path, "content": "x\n"}})
        .to_string()
        .into_bytes()
    }

    fn reply(seen: Seen) -> Value {
        match seen {
            Seen::Reply(answer) => answer,
            _ => panic!("no reply"),
        }
    }

    #[test]
    fn only_an_allowed_edits_proposed_write_is_noted_and_nothing_else_served() {
        let mut turn = TurnDialect::new(WarmProtocol::Acp, 1, "s");
        let refused = reply(turn.see(&write_request("/w/one.txt")).0);
        assert_eq!(refused["error"]["code"], -32601, "{refused}");
        let ask = PermissionAsk::of(&json!({"toolCall": {"kind": "edit", "title": "write",
            "locations": [{"path": "one.txt"}]}, "options": []}));
        turn.allowed(&ask, std::path::Path::new("/w"));
        let noted = reply(turn.see(&write_request("/w/one.txt")).0);
        assert_eq!(noted, json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
        let other = reply(turn.see(&write_request("/w/two.txt")).0);
        assert_eq!(other["error"]["code"], -32601, "{other}");
        // A command allowed names no file to write.
        let run = PermissionAsk::of(&json!({"toolCall": {"kind": "execute", "title": "bash",
            "locations": [{"path": "/w/three.txt"}]}, "options": []}));
        turn.allowed(&run, std::path::Path::new("/w"));
        let three = reply(turn.see(&write_request("/w/three.txt")).0);
        assert_eq!(three["error"]["code"], -32601, "{three}");
    }
}
