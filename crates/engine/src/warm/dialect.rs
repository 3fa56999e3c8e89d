//! What differs between the protocols a warm host speaks to its agent
//! ([`ganger_agents::WarmProtocol`]): the message that sends a prompt or cancels a turn, what
//! an agent's line is to the host (the turn's end, a permission question, a request to refuse),
//! which lines belong in the round's stream, and the answers. The host's loop is the same for
//! all of them.

use super::policy::Decision;
use ganger_agents::WarmProtocol;
use ganger_agents::acp::BY_GANGER;
use ganger_agents::acp::protocol::{self, Incoming, PermissionAsk};
use ganger_agents::stream_json_control as control;
use serde_json::Value;

/// What one line of the agent is to the host during a turn.
pub(crate) enum Seen {
    /// The turn is over (ACP: the prompt's answer; stream-json: the `result` line);
    /// `answered` when it is ACP's successful answer, which some agents leave without the
    /// turn's tokens (the host gives them first).
    TurnEnded { answered: bool },
    /// The agent asks whether a tool may run; [`answer`] says how to reply.
    Ask(PermissionAsk, Asker),
    /// Another request of the agent: this answer refuses it.
    Refuse(Value),
    /// The session's running cost, as the agent reports it (ACP's `usage_update`).
    Cost(f64),
    /// Nothing for the host to do.
    Other,
}

/// Who asked, to address the answer.
pub(crate) enum Asker {
    Acp(Value),
    Control(String),
}

/// Reads `line` of the agent during the turn whose prompt had id `prompt_id` (ACP); the flag
/// says whether the line belongs in the round's stream (stream-json's control messages do
/// not: ganger writes its own line for each decision).
pub(crate) fn see(kind: WarmProtocol, line: &[u8], prompt_id: u64) -> (Seen, bool) {
    match kind {
        WarmProtocol::Acp => {
            let seen = match protocol::classify(line) {
                Some(Incoming::Request { id, method, params }) => {
                    if method == "session/request_permission" {
                        Seen::Ask(PermissionAsk::of(&params), Asker::Acp(id))
                    } else {
                        Seen::Refuse(protocol::method_not_found(&id, &method))
                    }
                }
                Some(Incoming::Notification { params, .. }) => {
                    match params["update"]["cost"]["amount"].as_f64() {
                        Some(cost) => Seen::Cost(cost),
                        None => Seen::Other,
                    }
                }
                Some(Incoming::Response {
                    id: Some(id),
                    result,
                }) if id == prompt_id => Seen::TurnEnded {
                    answered: result.is_ok(),
                },
                _ => Seen::Other,
            };
            (seen, true)
        }
        WarmProtocol::StreamJsonControl => match control::classify(line) {
            control::Line::Result => (Seen::TurnEnded { answered: false }, true),
            control::Line::Stream => (Seen::Other, true),
            control::Line::Ask { request_id, ask } => {
                (Seen::Ask(ask, Asker::Control(request_id)), false)
            }
            control::Line::Request { request_id } => {
                (Seen::Refuse(control::unsupported(&request_id)), false)
            }
            control::Line::Answer => (Seen::Other, false),
        },
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
    }
}

/// The message that sends `prompt` into `session` as request `id`.
pub(crate) fn prompt(kind: WarmProtocol, id: u64, session: &str, prompt: &str) -> Value {
    match kind {
        WarmProtocol::Acp => protocol::prompt(id, session, prompt),
        WarmProtocol::StreamJsonControl => control::user_message(prompt),
    }
}

/// The message that cancels the turn running in `session`; `id` names the request.
pub(crate) fn cancel(kind: WarmProtocol, id: u64, session: &str) -> Value {
    match kind {
        WarmProtocol::Acp => protocol::cancel(session),
        WarmProtocol::StreamJsonControl => control::interrupt(&format!("ganger-cancel-{id}")),
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
    }
}
