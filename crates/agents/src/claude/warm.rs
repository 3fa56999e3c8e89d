//! Claude Code kept warm: one long-lived `claude -p --input-format stream-json` process per
//! task, a round being one user message on its stdin and ending at its `result` line
//! (docs/agents/warm-codex-claude-measured.md, part B). Claude's own protocol rather than ACP:
//! Zed's ACP adapter runs a bundled older Claude unless told otherwise, adds a title request
//! to the model per prompt and ignores stdin's end; the native stream is the cold round's, so
//! the cold reader reads it.
//!
//! - The session is the process's: `--session-id UUID` for a new one, `--resume ID` to continue
//!   one (both interchangeable with cold rounds in either direction); a round of another
//!   session needs another process.
//! - `--permission-prompt-tool stdio` with `--permission-mode default`: before a tool that
//!   edits, runs or fetches, Claude asks on stdout (`control_request` `can_use_tool`) and waits
//!   for the answer (`control_response` allow or deny); a denied call writes nothing, its tool
//!   result is ganger's message, and the result lists it in `permission_denials`.
//! - Cancel: `control_request` `interrupt`; the turn ends with a `result` within about 60 ms
//!   and a running Bash command is killed; the session stays usable.

use crate::acp::protocol::PermissionAsk;
use crate::adapter::{CommandPlan, PlanError, RoundRequest};
use serde_json::{Value, json};

/// The command of Claude Code kept warm for rounds like `request`: the cold round's model,
/// settings and environment, reading user messages from stdin, asking ganger before tools.
pub fn warm_plan(request: &RoundRequest<'_>) -> Result<CommandPlan, PlanError> {
    let cold = super::command::plan(request)?;
    let mut args: Vec<String> = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    .map(String::from)
    .to_vec();
    // The cold plan's session, model and settings options, without its permission options
    // (they come last: from `--permission-mode` on).
    let kept = cold
        .args
        .iter()
        .position(|a| a == "--permission-mode")
        .unwrap_or(cold.args.len());
    // After the cold plan's own headless options.
    args.extend(
        cold.args[super::command::HEADLESS.len()..kept]
            .iter()
            .cloned(),
    );
    args.extend(
        [
            "--permission-mode",
            "default",
            "--permission-prompt-tool",
            "stdio",
        ]
        .map(String::from),
    );
    let mut plan = CommandPlan::new(args, cold.env, None);
    plan.session = Some(request.session.unwrap_or(request.new_session_id).to_owned());
    plan.env.retain(|(key, _)| key != "IS_SANDBOX");
    Ok(plan)
}

/// The line that sends `prompt` as the next user message.
pub fn user_message(prompt: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": prompt},
        "parent_tool_use_id": null, "session_id": ""})
}

/// The line that interrupts the running turn.
pub fn interrupt(request_id: &str) -> Value {
    json!({"type": "control_request", "request_id": request_id,
        "request": {"subtype": "interrupt"}})
}

/// What a line of the warm process is to its host.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// The turn's `result`: the turn is over.
    Result,
    /// Claude asks before a tool runs; answer with [`permission_answer`].
    Ask {
        request_id: String,
        ask: PermissionAsk,
    },
    /// Another request of Claude's to its host (answered with [`unsupported`]).
    Request { request_id: String },
    /// The answer to one of the host's requests (an interrupt).
    Answer,
    /// Part of the turn's stream.
    Stream,
}

/// Reads one line of the warm process.
pub fn classify(line: &[u8]) -> Line {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return Line::Stream;
    };
    match value["type"].as_str() {
        Some("result") => Line::Result,
        Some("control_response") => Line::Answer,
        Some("control_request") => {
            let request_id = value["request_id"].as_str().unwrap_or_default().to_owned();
            let request = &value["request"];
            if request["subtype"] == "can_use_tool" {
                Line::Ask {
                    request_id,
                    ask: ask_of(request),
                }
            } else {
                Line::Request { request_id }
            }
        }
        _ => Line::Stream,
    }
}

/// A `can_use_tool` request as a permission question: the tool, its ACP kind (by Claude's
/// tool names), its input and the paths it names.
fn ask_of(request: &Value) -> PermissionAsk {
    let tool = request["tool_name"].as_str().unwrap_or("tool").to_owned();
    let kind = match tool.as_str() {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => "edit",
        "Bash" | "BashOutput" | "KillShell" => "execute",
        "WebFetch" | "WebSearch" => "fetch",
        "Read" | "Grep" | "Glob" | "LS" => "read",
        _ => "other",
    };
    let input = request.get("input").cloned().unwrap_or(Value::Null);
    let mut paths: Vec<String> = ["file_path", "notebook_path", "path"]
        .iter()
        .filter_map(|key| input[*key].as_str().map(str::to_owned))
        .collect();
    if let Some(blocked) = request["blocked_path"].as_str()
        && !paths.iter().any(|p| p == blocked)
    {
        paths.push(blocked.to_owned());
    }
    PermissionAsk {
        tool,
        kind: Some(kind.to_owned()),
        input,
        paths,
        options: Vec::new(),
    }
}

/// The answer to a `can_use_tool` request: allowed with its input unchanged, or denied with
/// `message` (which becomes the call's tool result, and the model's to read).
pub fn permission_answer(
    request_id: &str,
    ask: &PermissionAsk,
    allow: bool,
    message: &str,
) -> Value {
    let response = if allow {
        json!({"behavior": "allow", "updatedInput": ask.input})
    } else {
        json!({"behavior": "deny", "message": message})
    };
    json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": request_id, "response": response}})
}

/// The answer to a request ganger does not serve.
pub fn unsupported(request_id: &str) -> Value {
    json!({"type": "control_response", "response": {"subtype": "error",
        "request_id": request_id, "error": "not supported by ganger's warm host"}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::Permission;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn request<'a>(
        session: Option<&'a str>,
        env: &'a BTreeMap<String, String>,
        config: Option<&'a Value>,
    ) -> RoundRequest<'a> {
        RoundRequest {
            prompt: "do it",
            session,
            resume_at: None,
            new_session_id: "0d54a1c2-0000-4000-8000-000000000001",
            title: "t",
            model: Some("claude-fake"),
            worktree: Path::new("/w"),
            config,
            inherited_config: None,
            permission: Permission::Write,
            sandboxed: true,
            env,
            agent_dir: Path::new("/a"),
        }
    }

    #[test]
    fn the_warm_process_keeps_the_cold_session_model_and_settings_and_asks_before_tools() {
        let env = BTreeMap::new();
        let settings = json!({"includeCoAuthoredBy": false});
        let new = warm_plan(&request(None, &env, Some(&settings))).unwrap();
        assert_eq!(
            new.args,
            [
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--session-id",
                "0d54a1c2-0000-4000-8000-000000000001",
                "--model",
                "claude-fake",
                "--settings",
                r#"{"includeCoAuthoredBy":false}"#,
                "--permission-mode",
                "default",
                "--permission-prompt-tool",
                "stdio"
            ]
        );
        assert_eq!(
            new.session.as_deref(),
            Some("0d54a1c2-0000-4000-8000-000000000001")
        );
        assert_eq!(new.stdin, None, "prompts go as messages");
        assert!(
            !new.env.iter().any(|(k, _)| k == "IS_SANDBOX"),
            "nothing is bypassed: {:?}",
            new.env
        );
        let resumed = warm_plan(&request(Some("s-1"), &env, None)).unwrap();
        assert_eq!(resumed.args[6..9], ["--resume", "s-1", "--model"]);
        assert_eq!(resumed.session.as_deref(), Some("s-1"));
    }

    #[test]
    fn lines_are_told_apart_and_a_tool_question_names_its_kind_and_paths() {
        assert_eq!(
            classify(br#"{"type":"result","subtype":"success"}"#),
            Line::Result
        );
        assert_eq!(classify(br#"{"type":"assistant"}"#), Line::Stream);
        assert_eq!(classify(b"not json"), Line::Stream);
        let write = br#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/w/a.txt","content":"x"},"tool_use_id":"c1"}}"#;
        let Line::Ask { request_id, ask } = classify(write) else {
            panic!("not a question")
        };
        assert_eq!(request_id, "r1");
        assert_eq!(ask.kind.as_deref(), Some("edit"));
        assert_eq!(ask.paths, ["/w/a.txt"]);
        let bash = br#"{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch b"},"blocked_path":"/w/b"}}"#;
        let Line::Ask { ask, .. } = classify(bash) else {
            panic!("not a question")
        };
        assert_eq!(
            (ask.kind.as_deref(), ask.paths.as_slice()),
            (Some("execute"), ["/w/b".to_owned()].as_slice())
        );
        assert_eq!(
            permission_answer("r2", &ask, false, "no")["response"]["response"],
            json!({"behavior": "deny", "message": "no"})
        );
        assert_eq!(
            permission_answer("r2", &ask, true, "")["response"]["response"],
            json!({"behavior": "allow", "updatedInput": {"command": "touch b"}})
        );
        assert_eq!(
            classify(br#"{"type":"control_request","request_id":"r3","request":{"subtype":"hook_callback"}}"#),
            Line::Request {
                request_id: "r3".into()
            }
        );
    }
}
