//! A session of OpenCode as another host takes it in: what `opencode export ID` prints
//! (`{info, messages: [{info, parts}]}`), read from OpenCode's own database, for `opencode
//! import FILE` on the other host (measured with 1.18.33: docs/agents/session-move.md). Read
//! here rather than by running `opencode export` (4 s of a loaded machine after every round
//! of a task that may move); taken in by OpenCode itself, which knows its own tables.

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::time::Duration;

/// `session` as `opencode export` prints it, from the database of an OpenCode run with
/// environment `env`; `Err` says why it could not be read.
pub fn export(env: &BTreeMap<String, String>, session: &str) -> Result<Vec<u8>, String> {
    let vars: Vec<(OsString, OsString)> = env
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    let path =
        super::turn_usage::database(&vars).ok_or("OpenCode's environment names no database")?;
    let conn = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("{}: {e}", path.display()))?;
    let read = |e: rusqlite::Error| format!("{}: {e}", path.display());
    conn.busy_timeout(Duration::from_secs(5)).map_err(read)?;
    let info = conn
        .query_row("SELECT * FROM session WHERE id = ?1", [session], info)
        .optional()
        .map_err(read)?
        .ok_or_else(|| format!("{} holds no session {session}", path.display()))?;
    let mut parts: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut statement = conn
        .prepare(
            "SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id",
        )
        .map_err(read)?;
    let rows = statement
        .query_map([session], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .map_err(read)?;
    for row in rows {
        let (id, message, data) = row.map_err(read)?;
        let mut part = object(&data)?;
        part.insert("id".into(), id.into());
        part.insert("messageID".into(), message.clone().into());
        part.insert("sessionID".into(), session.into());
        parts.entry(message).or_default().push(Value::Object(part));
    }
    let mut statement = conn
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
        .map_err(read)?;
    let rows = statement
        .query_map([session], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(read)?;
    let mut messages = Vec::new();
    for row in rows {
        let (id, data) = row.map_err(read)?;
        let mut message = object(&data)?;
        message.insert("id".into(), id.clone().into());
        message.insert("sessionID".into(), session.into());
        let parts = parts.remove(&id).unwrap_or_default();
        messages.push(json!({"info": Value::Object(message), "parts": parts}));
    }
    serde_json::to_vec(&json!({"info": info, "messages": messages})).map_err(|e| e.to_string())
}

/// A row's JSON text as an object.
fn object(data: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(data) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err("OpenCode's database holds a record that is not a JSON object".to_owned()),
    }
}

/// A `session` row as the export's `info`: the columns under the names and shapes of
/// OpenCode's API; what is unset is left out, as the export leaves it.
fn info(row: &Row<'_>) -> rusqlite::Result<Value> {
    let text = |name: &str| row.get::<_, Option<String>>(name);
    let number = |name: &str| row.get::<_, Option<i64>>(name);
    let parsed = |name: &str| -> rusqlite::Result<Option<Value>> {
        Ok(text(name)?.and_then(|t| serde_json::from_str(&t).ok()))
    };
    let mut info = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            info.insert(key.to_owned(), value);
        }
    };
    put("id", text("id")?.map(Value::from));
    put("slug", text("slug")?.map(Value::from));
    put("projectID", text("project_id")?.map(Value::from));
    put("workspaceID", text("workspace_id")?.map(Value::from));
    put("directory", text("directory")?.map(Value::from));
    put("path", text("path")?.map(Value::from));
    put("parentID", text("parent_id")?.map(Value::from));
    put("title", text("title")?.map(Value::from));
    put("agent", text("agent")?.map(Value::from));
    put("model", parsed("model")?);
    put("version", text("version")?.map(Value::from));
    put("share", text("share_url")?.map(|url| json!({"url": url})));
    let summary = match (
        number("summary_additions")?,
        number("summary_deletions")?,
        number("summary_files")?,
    ) {
        (Some(additions), Some(deletions), Some(files)) => {
            let mut summary =
                json!({"additions": additions, "deletions": deletions, "files": files});
            if let Some(diffs) = parsed("summary_diffs")? {
                summary["diffs"] = diffs;
            }
            Some(summary)
        }
        _ => None,
    };
    put("summary", summary);
    put("metadata", parsed("metadata")?);
    let cost: f64 = row.get("cost")?;
    put("cost", Some(json_number(cost)));
    put(
        "tokens",
        Some(json!({
            "input": row.get::<_, i64>("tokens_input")?,
            "output": row.get::<_, i64>("tokens_output")?,
            "reasoning": row.get::<_, i64>("tokens_reasoning")?,
            "cache": {"read": row.get::<_, i64>("tokens_cache_read")?,
                      "write": row.get::<_, i64>("tokens_cache_write")?},
        })),
    );
    put("revert", parsed("revert")?);
    put("permission", parsed("permission")?);
    let mut time = json!({"created": row.get::<_, i64>("time_created")?,
                          "updated": row.get::<_, i64>("time_updated")?});
    if let Some(at) = number("time_compacting")? {
        time["compacting"] = at.into();
    }
    if let Some(at) = number("time_archived")? {
        time["archived"] = at.into();
    }
    put("time", Some(time));
    Ok(Value::Object(info))
}

/// A cost as JSON: a whole number as an integer, as OpenCode's export prints `0`.
fn json_number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9e15 {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// A database with OpenCode 1.18.33's three tables (the columns the export reads).
    fn database(dir: &std::path::Path) {
        let db = Connection::open(dir.join("opencode/opencode.db")).unwrap();
        db.execute_batch(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT,
               parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT,
               title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT,
               summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER,
               summary_diffs TEXT, metadata TEXT, cost REAL DEFAULT 0 NOT NULL,
               tokens_input INTEGER DEFAULT 0 NOT NULL, tokens_output INTEGER DEFAULT 0 NOT NULL,
               tokens_reasoning INTEGER DEFAULT 0 NOT NULL,
               tokens_cache_read INTEGER DEFAULT 0 NOT NULL,
               tokens_cache_write INTEGER DEFAULT 0 NOT NULL, revert TEXT, permission TEXT,
               agent TEXT, model TEXT, time_created INTEGER NOT NULL,
               time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
             CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
               time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL,
               session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
               time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             INSERT INTO session VALUES ('ses_a', 'p1', NULL, NULL, 'quiet-fox', '/w/app', '',
               'T', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0.25, 10, 2, 0, 1, 0, NULL,
               '[{\"permission\":\"question\",\"pattern\":\"*\",\"action\":\"deny\"}]',
               'build', '{\"id\":\"m\",\"providerID\":\"p\"}', 100, 200, NULL, NULL);
             INSERT INTO session VALUES ('ses_b', 'p1', NULL, NULL, 's', '/w/other', '', 'U',
               '1.18.33', NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL,
               NULL, NULL, 1, 1, NULL, NULL);
             INSERT INTO message VALUES ('msg_2', 'ses_a', 20, 20, '{\"role\":\"assistant\"}');
             INSERT INTO message VALUES ('msg_1', 'ses_a', 10, 10, '{\"role\":\"user\"}');
             INSERT INTO message VALUES ('msg_3', 'ses_b', 30, 30, '{\"role\":\"user\"}');
             INSERT INTO part VALUES ('prt_2', 'msg_2', 'ses_a', 21, 21, '{\"type\":\"text\",\"text\":\"b\"}');
             INSERT INTO part VALUES ('prt_1', 'msg_2', 'ses_a', 20, 20, '{\"type\":\"step-start\"}');
             INSERT INTO part VALUES ('prt_0', 'msg_1', 'ses_a', 10, 10, '{\"type\":\"text\",\"text\":\"a\"}');",
        )
        .unwrap();
    }

    #[test]
    fn a_session_reads_back_as_opencodes_export_prints_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("opencode")).unwrap();
        database(dir.path());
        let env = BTreeMap::from([(
            "XDG_DATA_HOME".to_owned(),
            dir.path().to_string_lossy().into_owned(),
        )]);
        let read: Value = serde_json::from_slice(&export(&env, "ses_a").unwrap()).unwrap();
        assert_eq!(
            read["info"],
            json!({"id": "ses_a", "slug": "quiet-fox", "projectID": "p1", "directory": "/w/app",
                   "path": "", "title": "T", "agent": "build",
                   "model": {"id": "m", "providerID": "p"}, "version": "1.18.33",
                   "summary": {"additions": 0, "deletions": 0, "files": 0}, "cost": 0.25,
                   "tokens": {"input": 10, "output": 2, "reasoning": 0,
                              "cache": {"read": 1, "write": 0}},
                   "permission": [{"permission": "question", "pattern": "*", "action": "deny"}],
                   "time": {"created": 100, "updated": 200}})
        );
        // Messages in time order, each with its parts in order, and nothing of another session.
        assert_eq!(
            read["messages"],
            json!([
                {"info": {"role": "user", "id": "msg_1", "sessionID": "ses_a"},
                 "parts": [{"type": "text", "text": "a", "id": "prt_0", "messageID": "msg_1",
                            "sessionID": "ses_a"}]},
                {"info": {"role": "assistant", "id": "msg_2", "sessionID": "ses_a"},
                 "parts": [{"type": "step-start", "id": "prt_1", "messageID": "msg_2",
                            "sessionID": "ses_a"},
                           {"type": "text", "text": "b", "id": "prt_2", "messageID": "msg_2",
                            "sessionID": "ses_a"}]}
            ])
        );
        assert!(
            export(&env, "ses_none")
                .unwrap_err()
                .contains("holds no session ses_none")
        );
        let empty = BTreeMap::from([("XDG_DATA_HOME".to_owned(), "/nonexistent".to_owned())]);
        assert!(export(&empty, "ses_a").is_err());
    }
}
