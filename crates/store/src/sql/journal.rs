//! The journal as rows: an entry is appended in the transaction of the change it tells of,
//! and read back with its task's slug, all of it in order or a commander's part of it.

use super::row::Row;
use super::{Dialect, Sql, bind};
use crate::error::StoreError;
use crate::journal::{JournalEntry, JournalEvent};
use crate::records::now_ms;

/// The columns an entry is read from, `j` being the journal and `t` its task.
const JOURNAL_COLUMNS: &str = "j.id, j.at, t.slug, j.round, j.kind, j.commander, j.detail";

/// An entry, from [`JOURNAL_COLUMNS`].
fn entry(row: &dyn Row) -> Result<JournalEntry, StoreError> {
    let detail: String = row.get(6)?;
    Ok(JournalEntry {
        id: row.get(0)?,
        at: row.get(1)?,
        slug: row.get(2)?,
        round: row.get(3)?,
        kind: row.get(4)?,
        commander: row.get(5)?,
        // A detail that does not read back is shown as null rather than hiding the entry.
        detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
    })
}

/// Appends `event` of round `round` of the task, by `commander`; returns the entry's number.
pub(crate) fn append(
    sql: &mut dyn Sql,
    task_id: i64,
    round: Option<u32>,
    commander: Option<&str>,
    event: &JournalEvent,
) -> Result<i64, StoreError> {
    let (kind, detail) = event.stored()?;
    sql.value(
        "INSERT INTO journal (at, task_id, round, kind, commander, detail) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        &bind![now_ms(), task_id, round, kind, commander, detail],
    )
}

/// Appends `event`, of no one task, by `commander` (a lander's steps); the entry's number.
pub(crate) fn append_untasked(
    sql: &mut dyn Sql,
    commander: &str,
    event: &JournalEvent,
) -> Result<i64, StoreError> {
    let (kind, detail) = event.stored()?;
    sql.value(
        "INSERT INTO journal (at, task_id, round, kind, commander, detail) \
         VALUES (?1, NULL, NULL, ?2, ?3, ?4) RETURNING id",
        &bind![now_ms(), kind, commander, detail],
    )
}

/// The journal after entry `after`, oldest first, at most `limit` entries.
pub(crate) fn page(
    sql: &mut dyn Sql,
    after: i64,
    limit: u32,
) -> Result<Vec<JournalEntry>, StoreError> {
    sql.rows(
        &format!(
            "SELECT {JOURNAL_COLUMNS} FROM journal j LEFT JOIN tasks t ON t.id = j.task_id \
             WHERE j.id > ?1 ORDER BY j.id LIMIT ?2"
        ),
        &bind![after, limit],
        entry,
    )
}

/// `commander`'s journal after entry `after` (see `EvidenceStore::commander_journal`).
pub(crate) fn commanders(
    sql: &mut dyn Sql,
    commander: &str,
    after: i64,
    limit: u32,
) -> Result<Vec<JournalEntry>, StoreError> {
    let dialect: Dialect = sql.dialect();
    let from = dialect.json_field("j.detail", &["from"]);
    let to = dialect.json_field("j.detail", &["to"]);
    sql.rows(
        &format!(
            "SELECT {JOURNAL_COLUMNS} FROM journal j LEFT JOIN tasks t ON t.id = j.task_id \
             WHERE j.id > ?1 AND j.kind != 'round-started' AND (t.owner = ?2 \
                OR j.commander = ?2 \
                OR (j.kind IN ('transferred', 'assigned', 'released') \
                    AND ({from} = ?2 OR {to} = ?2))) \
             ORDER BY j.id LIMIT ?3"
        ),
        &bind![after, commander, limit],
        entry,
    )
}

/// The last entry's number (0 for an empty journal).
pub(crate) fn last_id(sql: &mut dyn Sql) -> Result<i64, StoreError> {
    sql.value("SELECT COALESCE(MAX(id), 0) FROM journal", &[])
}
