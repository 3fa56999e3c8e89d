//! The agents' saved sessions, one row per task in both backends (`sessions`): the part of
//! [`Streams`](crate::Streams) that is a table. Each backend's `Streams` keeps its own streams
//! (SQLite's files, PostgreSQL's chunks) and hands these two to the shared statements.

use super::{Database, bind};
use crate::error::StoreError;
use crate::records::now_ms;
use crate::streams::KeptSession;

/// Keeps `kept` as the task's session, unless a later round's is kept already.
pub(crate) fn keep(db: &impl Database, task_id: i64, kept: &KeptSession) -> Result<(), StoreError> {
    let at = now_ms();
    db.again_if_cut(|sql| {
        sql.execute(
            "INSERT INTO sessions (task_id, round, session, data, at) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (task_id) DO UPDATE SET round = excluded.round, \
             session = excluded.session, data = excluded.data, at = excluded.at \
             WHERE excluded.round >= sessions.round",
            &bind![task_id, kept.round, &kept.session, &kept.data, at],
        )
    })?;
    Ok(())
}

/// The session the task's latest round kept, if any.
pub(crate) fn kept(db: &impl Database, task_id: i64) -> Result<Option<KeptSession>, StoreError> {
    db.again_if_cut(|sql| {
        sql.first(
            "SELECT round, session, data FROM sessions WHERE task_id = ?1",
            &bind![task_id],
            |row| {
                Ok(KeptSession {
                    round: row.get(0)?,
                    session: row.get(1)?,
                    data: row.get(2)?,
                })
            },
        )
    })
}
