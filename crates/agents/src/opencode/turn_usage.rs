//! The tokens of a turn of OpenCode kept warm. Over ACP, OpenCode answers a prompt with the
//! usage of the turn's last model request only (docs/agents/acp-measured.md); its own database
//! keeps each request's, on the assistant message of each step. The turn's tokens are the sum
//! over the session's assistant messages made since the turn began. Read-only, and given up
//! (`None`, the ACP figure stands) on anything unexpected: no database, another schema, a lock
//! held longer than a moment.

use ganger_events::Usage;
use rusqlite::{Connection, OpenFlags};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// The tokens of `session`'s assistant messages made at or after `since_ms` (milliseconds
/// since the epoch), from the database of the OpenCode run with environment `env`.
pub fn turn_usage(env: &[(OsString, OsString)], session: &str, since_ms: u64) -> Option<Usage> {
    let path = database(env)?;
    if !path.is_file() {
        return None;
    }
    let conn = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.busy_timeout(Duration::from_millis(500)).ok()?;
    let mut query = conn
        .prepare("SELECT data FROM message WHERE session_id = ?1 AND time_created >= ?2")
        .ok()?;
    let since = i64::try_from(since_ms).ok()?;
    let rows = query
        .query_map((session, since), |row| row.get::<_, String>(0))
        .ok()?;
    let mut usage = Usage::default();
    let mut steps = 0;
    for data in rows {
        let message: serde_json::Value = serde_json::from_str(&data.ok()?).ok()?;
        if message["role"] != "assistant" {
            continue;
        }
        let tokens = &message["tokens"];
        let count = |value: &serde_json::Value| value.as_u64().unwrap_or(0);
        usage.input += count(&tokens["input"]);
        usage.output += count(&tokens["output"]);
        usage.reasoning += count(&tokens["reasoning"]);
        usage.cache_read += count(&tokens["cache"]["read"]);
        usage.cache_write += count(&tokens["cache"]["write"]);
        steps += 1;
    }
    (steps > 0).then_some(usage)
}

/// Where OpenCode keeps its database: `OPENCODE_DB` when absolute, else that name (or
/// `opencode.db`) in its data directory, `$XDG_DATA_HOME/opencode` (`~/.local/share/opencode`).
pub(crate) fn database(env: &[(OsString, OsString)]) -> Option<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| PathBuf::from(value))
            .filter(|value| !value.as_os_str().is_empty())
    };
    let named = var("OPENCODE_DB");
    if let Some(db) = &named
        && db.is_absolute()
    {
        return Some(db.clone());
    }
    let data = var("XDG_DATA_HOME")
        .filter(|dir| dir.is_absolute())
        .or_else(|| var("HOME").map(|home| home.join(".local/share")))?;
    let name = named.unwrap_or_else(|| PathBuf::from("opencode.db"));
    (name.as_os_str() != ":memory:").then(|| data.join("opencode").join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn the_database_is_where_opencode_keeps_it() {
        assert_eq!(
            database(&env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/d")])),
            Some(PathBuf::from("/d/opencode/opencode.db"))
        );
        assert_eq!(
            database(&env(&[("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/share/opencode/opencode.db"))
        );
        assert_eq!(
            database(&env(&[("HOME", "/h"), ("OPENCODE_DB", "/x/o.db")])),
            Some(PathBuf::from("/x/o.db"))
        );
        assert_eq!(
            database(&env(&[("HOME", "/h"), ("OPENCODE_DB", "mine.db")])),
            Some(PathBuf::from("/h/.local/share/opencode/mine.db"))
        );
        assert_eq!(
            database(&env(&[("OPENCODE_DB", ":memory:"), ("HOME", "/h")])),
            None
        );
    }

    #[test]
    fn a_turns_tokens_are_its_assistant_messages_since_it_began() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("opencode/opencode.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let conn = Connection::open(&db).unwrap();
        // The table as OpenCode 1.18.33 makes it.
        conn.execute_batch(
            "CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
               time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
        )
        .unwrap();
        let step = |id: &str, session: &str, at: i64, data: &str| {
            conn.execute(
                "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
                (id, session, at, data),
            )
            .unwrap();
        };
        let assistant = |input: u64, output: u64, read: u64| {
            format!(
                r#"{{"role":"assistant","tokens":{{"total":0,"input":{input},"output":{output},"reasoning":1,"cache":{{"write":2,"read":{read}}}}}}}"#
            )
        };
        step("m1", "s", 1_000, &assistant(900, 9, 0));
        step("m2", "s", 2_000, r#"{"role":"user"}"#);
        step("m3", "s", 2_100, &assistant(2396, 25, 5));
        step("m4", "s", 2_200, &assistant(2419, 28, 7));
        step("m5", "other", 2_300, &assistant(1, 1, 1));
        let env = env(&[("XDG_DATA_HOME", dir.path().to_str().unwrap())]);
        let usage = turn_usage(&env, "s", 2_000).unwrap();
        assert_eq!(
            (
                usage.input,
                usage.output,
                usage.reasoning,
                usage.cache_read,
                usage.cache_write
            ),
            (2396 + 2419, 25 + 28, 2, 12, 4)
        );
        assert_eq!(turn_usage(&env, "s", 3_000), None, "no step since");
        assert_eq!(turn_usage(&env, "gone", 0), None);
    }
}
