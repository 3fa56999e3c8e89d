//! The ACP messages ganger sends and the ones it reads back. ganger is the client: it
//! advertises no file system and no terminal, so the agent reads and writes files and runs
//! commands itself, in its sandbox, and asks ganger only whether it may
//! (`session/request_permission`).

use serde_json::{Value, json};
use std::path::Path;

/// The protocol version ganger speaks (every agent measured answers 1).
pub const PROTOCOL_VERSION: u64 = 1;

/// `initialize`: no client capabilities.
pub fn initialize(id: u64) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false},
            "clientInfo": {"name": "ganger", "version": env!("CARGO_PKG_VERSION")}
        }),
    )
}

/// `session/new` in `cwd`, with no MCP servers of ganger's.
pub fn new_session(id: u64, cwd: &Path) -> Value {
    request(id, "session/new", json!({"cwd": cwd, "mcpServers": []}))
}

/// `session/load` of `session` (the agent replays it as updates before it answers).
pub fn load_session(id: u64, session: &str, cwd: &Path) -> Value {
    request(
        id,
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    )
}

/// `session/prompt`: one turn of `session` with `text`.
pub fn prompt(id: u64, session: &str, text: &str) -> Value {
    request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    )
}

/// `session/cancel`: a notification; the turn's `session/prompt` then answers `cancelled`.
pub fn cancel(session: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
}

/// The answer to a permission request: the option chosen, or `cancelled` when none fits.
pub fn permission_answer(id: &Value, option: Option<&str>) -> Value {
    let outcome = match option {
        Some(option) => json!({"outcome": "selected", "optionId": option}),
        None => json!({"outcome": "cancelled"}),
    };
    json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}})
}

/// The answer to OpenCode's `fs/write_text_file` of an edit ganger allowed: noted, not
/// written. OpenCode sends the edit's new text to the client after the permission (for an
/// editor to show), whatever capabilities the client advertised, and does not wait for the
/// answer: its own tool writes the file, in its sandbox. An error answer left a stack trace
/// in its log for every allowed edit (docs/agents/acp-measured.md, section 4).
pub fn proposed_edit_noted(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {}})
}

/// The answer to a request ganger does not serve (the agent asked for a client capability
/// ganger did not advertise).
pub fn method_not_found(id: &Value, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32601, "message": format!("ganger does not serve {method}")}})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// One message from the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to request `id`: its result, or its error's message.
    Response {
        id: Option<u64>,
        result: Result<Value, String>,
    },
    /// A request of the agent's, to be answered under `id`.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification (`session/update`).
    Notification { method: String, params: Value },
}

/// What an error answer says: its `message`, with the `data.details` an agent puts the cause
/// in (Qwen Code: `Internal error` with `401 … (HTTP 401)` in the details), or the whole error
/// when it has no message.
fn error_text(error: &Value) -> String {
    let Some(message) = error.get("message").and_then(Value::as_str) else {
        return error.to_string();
    };
    match error["data"]["details"].as_str().map(str::trim) {
        Some(details) if !details.is_empty() && details != message => {
            format!("{message}: {details}")
        }
        _ => message.to_owned(),
    }
}

/// Reads one line of the agent's stdout; `None` when it is not a JSON-RPC message (an agent
/// may print other lines there: they are kept in the stream and otherwise ignored).
pub fn classify(line: &[u8]) -> Option<Incoming> {
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(line) else {
        return None;
    };
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let params = message.remove("params").unwrap_or(Value::Null);
    match (method, message.remove("id")) {
        (Some(method), Some(id)) => Some(Incoming::Request { id, method, params }),
        (Some(method), None) => Some(Incoming::Notification { method, params }),
        (None, Some(id)) => {
            let result = match message.remove("error") {
                Some(error) => Err(error_text(&error)),
                None => Ok(message.remove("result").unwrap_or(Value::Null)),
            };
            Some(Incoming::Response {
                id: id.as_u64(),
                result,
            })
        }
        (None, None) => None,
    }
}

/// What a `session/request_permission` asks: the tool call and the options offered.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionAsk {
    /// The tool, as the agent names the call (its title, else its kind).
    pub tool: String,
    /// ACP's kind of the call: `edit`, `execute`, `read`, `delete`, `move`, `fetch`, ...
    pub kind: Option<String>,
    /// The call's arguments, as the agent gives them.
    pub input: Value,
    /// Paths the call touches.
    pub paths: Vec<String>,
    /// The options: (id, kind) with kind `allow_once`, `allow_always`, `reject_once`,
    /// `reject_always`.
    pub options: Vec<(String, String)>,
}

impl PermissionAsk {
    /// Reads a permission request's params.
    pub fn of(params: &Value) -> PermissionAsk {
        let call = &params["toolCall"];
        let text = |v: &Value| v.as_str().map(str::to_owned);
        let kind = text(&call["kind"]);
        let tool = text(&call["title"])
            .or_else(|| kind.clone())
            .unwrap_or_else(|| "tool".to_owned());
        let paths = call["locations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| text(&l["path"]))
            .collect();
        let options = params["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| Some((text(&o["optionId"])?, text(&o["kind"])?)))
            .collect();
        PermissionAsk {
            tool,
            kind,
            input: call.get("rawInput").cloned().unwrap_or(Value::Null),
            paths,
            options,
        }
    }

    /// The option that allows (or refuses) this one call: `*_once` preferred, since ganger
    /// decides every call afresh.
    pub fn option(&self, allow: bool) -> Option<&str> {
        let wanted: &[&str] = if allow {
            &["allow_once", "allow_always"]
        } else {
            &["reject_once", "reject_always"]
        };
        wanted.iter().find_map(|kind| {
            self.options
                .iter()
                .find(|(_, k)| k == kind)
                .map(|(id, _)| id.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart_by_method_and_id() {
        let response = classify(br#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
        assert_eq!(
            response,
            Some(Incoming::Response {
                id: Some(2),
                result: Ok(json!({"stopReason": "end_turn"}))
            })
        );
        let error =
            classify(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}"#);
        assert_eq!(
            error,
            Some(Incoming::Response {
                id: Some(3),
                result: Err("boom".into())
            })
        );
        // Qwen Code 0.24.4 keeps the model's failure in the details.
        let detailed = classify(
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error","data":{"details":"401 fake-llm: scripted fault http-401 (HTTP 401)"}}}"#,
        );
        assert_eq!(
            detailed,
            Some(Incoming::Response {
                id: Some(3),
                result: Err(
                    "Internal error: 401 fake-llm: scripted fault http-401 (HTTP 401)".into()
                )
            })
        );
        let request = classify(
            br#"{"jsonrpc":"2.0","id":"a","method":"session/request_permission","params":{}}"#,
        );
        assert!(matches!(request, Some(Incoming::Request { id, .. }) if id == json!("a")));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"session/update","params":{"x":1}}"#),
            Some(Incoming::Notification { method, params }) if method == "session/update" && params["x"] == 1
        ));
        assert_eq!(classify(b"Loading config..."), None);
        assert_eq!(classify(b"[1,2]"), None);
    }

    #[test]
    fn a_permission_request_names_the_call_and_its_once_options() {
        let params = json!({"sessionId": "s", "toolCall": {"toolCallId": "c1", "title": "bash",
            "kind": "execute", "rawInput": {"command": "git push"}, "locations": [{"path": "/w"}]},
            "options": [{"optionId": "always", "kind": "allow_always", "name": "Always"},
                        {"optionId": "once", "kind": "allow_once", "name": "Once"},
                        {"optionId": "no", "kind": "reject_once", "name": "Reject"}]});
        let ask = PermissionAsk::of(&params);
        assert_eq!(ask.tool, "bash");
        assert_eq!(ask.kind.as_deref(), Some("execute"));
        assert_eq!(ask.input["command"], "git push");
        assert_eq!(ask.paths, ["/w"]);
        assert_eq!(ask.option(true), Some("once"));
        assert_eq!(ask.option(false), Some("no"));
        let answer = permission_answer(&json!(7), None);
        assert_eq!(answer["result"]["outcome"]["outcome"], "cancelled");
    }
}
