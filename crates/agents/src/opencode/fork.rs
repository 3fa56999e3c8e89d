//! Forking an OpenCode session at a rewound point. OpenCode forks a session at a message only
//! through its server (`run --fork` copies the whole session), so ganger does what that fork
//! does with the CLI's own export and import: `opencode export SESSION`, keep the messages
//! created before the rewound round ended, give the session, its messages and their parts new
//! ids (the same time-ordered prefix, a new random tail, so their order is kept), and
//! `opencode import` the copy. The engine runs both commands in the task's worktree with the
//! environment of its rounds; this file gives their arguments and does the cutting. The old
//! session is left as it was.

use crate::capabilities::{CopiedSession, SessionCopy};
use serde_json::Value;
use std::collections::HashMap;

/// OpenCode's ids: a prefix (`ses_`, `msg_`, `prt_`), 12 hex digits of time and counter,
/// then 14 random characters.
const ID_HEAD: usize = 16;
const ID_LEN: usize = 30;

/// Copying an OpenCode session through `export` and `import`.
pub(crate) const COPY: SessionCopy = SessionCopy {
    export_args,
    env: &[
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ],
    cut,
    import_args,
    imported,
};

fn export_args(session: &str) -> Vec<String> {
    vec!["export".into(), session.into()]
}

fn import_args(file: &str) -> Vec<String> {
    vec!["import".into(), file.into()]
}

/// `opencode import` names the session it imported.
fn imported(stdout: &str, session: &str) -> Result<(), String> {
    if stdout.contains(session) {
        Ok(())
    } else {
        Err(format!(
            "`opencode import` did not import {session}: {}",
            stdout.trim()
        ))
    }
}

/// The export of `session` with the messages created up to `cut_ms` only, under new ids.
fn cut(
    exported: &[u8],
    session: &str,
    cut_ms: i64,
    fresh: &mut dyn FnMut() -> String,
) -> Result<CopiedSession, String> {
    let mut data: Value = serde_json::from_slice(exported)
        .map_err(|e| format!("`opencode export` did not print a session: {e}"))?;
    let session = fresh_id(session, fresh)?;
    let kept = keep_until(&mut data, cut_ms)?;
    if kept == 0 {
        return Err("the session has nothing from before the rewound point".into());
    }
    renumber(&mut data, &session, fresh)?;
    Ok(CopiedSession {
        session,
        data: data.to_string(),
    })
}

/// A new id in the place of `old`: the same prefix and time, a new random tail.
fn fresh_id(old: &str, fresh: &mut dyn FnMut() -> String) -> Result<String, String> {
    if old.len() != ID_LEN || !old.is_ascii() {
        return Err(format!("an OpenCode id of an unknown form: {old}"));
    }
    let random: String = fresh()
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
fn renumber(
    data: &mut Value,
    session: &str,
    fresh: &mut dyn FnMut() -> String,
) -> Result<(), String> {
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
        ids.insert(old.clone(), fresh_id(&old, fresh)?);
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
            let new = fresh_id(old, fresh)?;
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

    /// Distinct random tails, as UUIDs would give.
    fn counter() -> impl FnMut() -> String {
        let mut n = 0u32;
        move || {
            n += 1;
            format!("{n:08x}-0000-4000-8000-{n:012x}")
        }
    }

    #[test]
    fn a_fork_keeps_the_early_messages_with_new_linked_ids() {
        let exported = json!({
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
        let copy = cut(
            exported.to_string().as_bytes(),
            "ses_dd5db5510ffegQyKejQN46iKaz",
            25,
            &mut counter(),
        )
        .unwrap();
        let session = &copy.session;
        assert!(session.starts_with("ses_dd5db5510ffe") && session.len() == ID_LEN);
        assert_ne!(session, "ses_dd5db5510ffegQyKejQN46iKaz");
        let data: Value = serde_json::from_str(&copy.data).unwrap();
        assert_eq!(data["info"]["id"], session.as_str());
        assert_eq!(data["messages"].as_array().map(Vec::len), Some(2));
        let user = data["messages"][0]["info"]["id"].as_str().unwrap();
        assert!(user.starts_with("msg_0000000000a1") && user != "msg_0000000000a1aaaaaaaaaaaaaa");
        assert_eq!(data["messages"][1]["info"]["parentID"], user);
        assert_eq!(data["messages"][0]["parts"][0]["messageID"], user);
        assert_eq!(
            data["messages"][0]["parts"][0]["sessionID"],
            session.as_str()
        );
        assert_eq!(data["messages"][1]["info"]["sessionID"], session.as_str());
    }

    #[test]
    fn what_cannot_be_forked_says_why() {
        let early = json!({
            "info": { "id": "ses_dd5db5510ffegQyKejQN46iKaz" },
            "messages": [{ "info": { "id": "msg_0000000000a1aaaaaaaaaaaaaa", "time": { "created": 30 } } }]
        });
        assert_eq!(
            cut(
                early.to_string().as_bytes(),
                "ses_dd5db5510ffegQyKejQN46iKaz",
                25,
                &mut counter()
            ),
            Err("the session has nothing from before the rewound point".into())
        );
        assert_eq!(
            cut(early.to_string().as_bytes(), "short", 25, &mut counter()),
            Err("an OpenCode id of an unknown form: short".into())
        );
        assert!(
            cut(
                b"Error: no such session",
                "ses_dd5db5510ffegQyKejQN46iKaz",
                25,
                &mut counter()
            )
            .is_err()
        );
        assert!(imported("Imported session: ses_x", "ses_x").is_ok());
        assert_eq!(
            imported("nothing\n", "ses_x"),
            Err("`opencode import` did not import ses_x: nothing".into())
        );
    }
}
