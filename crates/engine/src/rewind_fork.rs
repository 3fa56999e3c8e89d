//! Forking an OpenCode session at a rewound point. OpenCode forks a session at a message only
//! through its server (`run --fork` copies the whole session), so ganger does what that fork
//! does with the CLI's own export and import: `opencode export SESSION`, keep the messages
//! created before the rewound round ended, give the session, its messages and their parts new
//! ids (the same time-ordered prefix, a new random tail, so their order is kept), and
//! `opencode import` the copy, run in the task's worktree with the environment of its rounds.
//! The old session is left as it was. Only for local tasks: a sandboxed agent keeps its
//! sessions where only its sandbox sees them.
//!
//! Claude Code forks at a point itself, while it runs the next prompt (`--resume SESSION
//! --resume-session-at UUID --fork-session`): here ganger only finds the point, the uuid of
//! the rewound round's last `assistant` event in its stream, and the next round uses it.

use crate::agent_env;
use crate::workspace::Workspace;
use ganger_agents::CommandPlan;
use ganger_sandbox::{AgentCommand, run_captured};
use ganger_store::{ForkPoint, Round, Task};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// How long an export or an import may take.
const LIMIT: Duration = Duration::from_secs(60);
/// OpenCode's ids: a prefix (`ses_`, `msg_`, `prt_`), 12 hex digits of time and counter,
/// then 14 random characters.
const ID_HEAD: usize = 16;
const ID_LEN: usize = 30;

/// Where a Claude Code session is forked to go back to the end of `round`: its session and
/// the uuid of its last answer (of the main conversation, not a sub-agent's).
pub(crate) fn claude_point(
    ws: &Workspace,
    task: &Task,
    round: &Round,
) -> Result<ForkPoint, String> {
    let session = round
        .session
        .clone()
        .ok_or_else(|| format!("round {} named no session", round.number))?;
    let stream = ws.state.round_file(&task.slug, round.number, "jsonl");
    let text = std::fs::read_to_string(&stream)
        .map_err(|e| format!("cannot read {}: {e}", stream.display()))?;
    let at = text
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            event["type"] == "assistant"
                && event["parent_tool_use_id"].is_null()
                && event["session_id"] == session.as_str()
        })
        .find_map(|event| event["uuid"].as_str().map(str::to_owned))
        .ok_or_else(|| format!("round {} has no answer to go back to", round.number))?;
    Ok(ForkPoint { session, at })
}

/// Whether ganger can fork this task's session at a round.
pub(crate) fn can_fork(task: &Task) -> bool {
    task.agent == "opencode" && task.sandbox == "local" && task.session.is_some()
}

/// Forks the task's session, keeping the messages created up to `cut_ms`; the new session's
/// id, or why it could not be made.
pub(crate) fn fork_opencode(ws: &Workspace, task: &Task, cut_ms: i64) -> Result<String, String> {
    let session = task.session.as_deref().ok_or("the task has no session")?;
    let exported = run(ws, task, &["export", session])?;
    let mut data: Value = serde_json::from_slice(&exported)
        .map_err(|e| format!("`opencode export` did not print a session: {e}"))?;
    let new_session = fresh_id(session)?;
    let kept = keep_until(&mut data, cut_ms)?;
    if kept == 0 {
        return Err("the session has nothing from before the rewound point".into());
    }
    renumber(&mut data, &new_session)?;
    let dir = ws.state.root().join("tasks").join(&task.slug);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("fork-{new_session}.json"));
    std::fs::write(&file, data.to_string()).map_err(|e| e.to_string())?;
    let imported = run(ws, task, &["import", &file.to_string_lossy()]);
    // The copy holds the transcript: it goes once imported, and also on a failure.
    let _ = std::fs::remove_file(&file);
    let imported = imported?;
    if !String::from_utf8_lossy(&imported).contains(&new_session) {
        return Err(format!(
            "`opencode import` did not import {new_session}: {}",
            String::from_utf8_lossy(&imported).trim()
        ));
    }
    Ok(new_session)
}

/// Runs the task's `opencode` with `args` in its worktree; its stdout.
fn run(ws: &Workspace, task: &Task, args: &[&str]) -> Result<Vec<u8>, String> {
    let adapter = agent_env::adapter_for(&task.agent, &ws.config).ok_or("no OpenCode adapter")?;
    let program = agent_env::resolve_program(adapter, &ws.config).map_err(|e| e.message)?;
    let worktree = task.worktree.to_string_lossy().into_owned();
    let plan = CommandPlan::new(
        Vec::new(),
        vec![
            // OpenCode takes its directory (and so the session's project) from $PWD.
            ("PWD".into(), worktree),
            ("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()),
        ],
        None,
    );
    let env = agent_env::agent_environment(adapter, &ws.config, &plan, &[]);
    let captured = run_captured(
        &AgentCommand {
            program,
            args: args.iter().map(Into::into).collect(),
            env,
            cwd: task.worktree.clone(),
            stdin: None,
            token: format!("fork-{}", crate::launch::new_token()),
            use_cgroup: false,
        },
        LIMIT,
    )
    .map_err(|e| e.to_string())?;
    match captured.exit {
        Some(exit) if exit.code == Some(0) => Ok(captured.stdout),
        _ => Err(format!(
            "`opencode {}` failed: {}",
            args.first().copied().unwrap_or_default(),
            String::from_utf8_lossy(&captured.stderr).trim()
        )),
    }
}

/// A new id in the place of `old`: the same prefix and time, a new random tail.
fn fresh_id(old: &str) -> Result<String, String> {
    if old.len() != ID_LEN || !old.is_ascii() {
        return Err(format!("an OpenCode id of an unknown form: {old}"));
    }
    let random: String = crate::launch::new_uuid()
        .chars()
        .filter(|c| *c != '-')
        .take(ID_LEN - ID_HEAD)
        .collect();
    Ok(format!("{}{random}", &old[..ID_HEAD]))
}

/// Drops the messages created after `cut_ms`; how many are kept.
fn keep_until(data: &mut Value, cut_ms: i64) -> Result<usize, String> {
    let messages = data
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .ok_or("the export has no messages")?;
    messages.retain(|m| {
        m.pointer("/info/time/created")
            .and_then(Value::as_i64)
            .is_some_and(|created| created <= cut_ms)
    });
    Ok(messages.len())
}

/// Gives the session, its messages and their parts new ids, keeping the links between them.
fn renumber(data: &mut Value, session: &str) -> Result<(), String> {
    let info = data
        .get_mut("info")
        .and_then(Value::as_object_mut)
        .ok_or("the export has no session info")?;
    info.insert("id".into(), session.into());
    let mut ids: HashMap<String, String> = HashMap::new();
    let messages = data
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .ok_or("the export has no messages")?;
    for message in messages.iter_mut() {
        let old = message
            .pointer("/info/id")
            .and_then(Value::as_str)
            .ok_or("a message without an id")?
            .to_owned();
        ids.insert(old.clone(), fresh_id(&old)?);
    }
    for message in messages.iter_mut() {
        let info = message
            .get_mut("info")
            .and_then(Value::as_object_mut)
            .ok_or("a message without info")?;
        let id = info
            .get("id")
            .and_then(Value::as_str)
            .and_then(|old| ids.get(old))
            .cloned()
            .ok_or("a message without an id")?;
        info.insert("id".into(), id.clone().into());
        info.insert("sessionID".into(), session.into());
        if let Some(parent) = info
            .get("parentID")
            .and_then(Value::as_str)
            .and_then(|p| ids.get(p))
        {
            info.insert("parentID".into(), parent.clone().into());
        }
        for part in message
            .get_mut("parts")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(part) = part.as_object_mut() else {
                continue;
            };
            let old = part
                .get("id")
                .and_then(Value::as_str)
                .ok_or("a part without an id")?;
            let new = fresh_id(old)?;
            part.insert("id".into(), new.into());
            part.insert("messageID".into(), id.clone().into());
            part.insert("sessionID".into(), session.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fork_keeps_the_early_messages_with_new_linked_ids() {
        let mut data = json!({
            "info": { "id": "ses_dd5db5510ffegQyKejQN46iKaz", "title": "t" },
            "messages": [
                { "info": { "id": "msg_0000000000a1aaaaaaaaaaaaaa", "sessionID": "ses_dd5db5510ffegQyKejQN46iKaz",
                            "role": "user", "time": { "created": 10 } },
                  "parts": [{ "id": "prt_0000000000a1aaaaaaaaaaaaaa", "messageID": "msg_0000000000a1aaaaaaaaaaaaaa" }] },
                { "info": { "id": "msg_0000000000a2aaaaaaaaaaaaaa", "parentID": "msg_0000000000a1aaaaaaaaaaaaaa",
                            "role": "assistant", "time": { "created": 20 } },
                  "parts": [] },
                { "info": { "id": "msg_0000000000a3aaaaaaaaaaaaaa", "role": "user", "time": { "created": 30 } },
                  "parts": [] }
            ]
        });
        assert_eq!(keep_until(&mut data, 25).unwrap(), 2);
        let session = fresh_id("ses_dd5db5510ffegQyKejQN46iKaz").unwrap();
        assert!(session.starts_with("ses_dd5db5510ffe") && session.len() == ID_LEN);
        assert_ne!(session, "ses_dd5db5510ffegQyKejQN46iKaz");
        renumber(&mut data, &session).unwrap();
        let user = data["messages"][0]["info"]["id"].as_str().unwrap();
        assert!(user.starts_with("msg_0000000000a1") && user != "msg_0000000000a1aaaaaaaaaaaaaa");
        assert_eq!(data["messages"][1]["info"]["parentID"], user);
        assert_eq!(data["messages"][0]["parts"][0]["messageID"], user);
        assert_eq!(
            data["messages"][0]["parts"][0]["sessionID"],
            session.as_str()
        );
        assert_eq!(data["messages"][1]["info"]["sessionID"], session.as_str());
        assert!(fresh_id("short").is_err());
    }
}
