//! The SQLite side of [`QueueStore`]: the `queue`, `fleets` and `model_pauses` tables
//! (migration 0009). Every move of an item is one `UPDATE … WHERE state = ?from`, so two
//! schedulers (which the serve lock forbids anyway) could never both claim one item.

use super::errors::is_unique_violation;
use super::{SqliteStore, to_json};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::queue::{
    FleetRecord, FleetSubmission, ModelPause, NewQueued, QueueItem, QueueKind, QueueState,
    QueueStore, SlugHolder,
};
use crate::records::now_ms;
use rusqlite::{Row, params};

const ITEM_COLUMNS: &str = "id, slug, kind, options, prompt_file, commander, generation, fleet, \
     after, not_before, state, reason, round, claimed_at, created_at, updated_at, claimed_by, prompt";

fn corrupt(column: &str, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        format!("queue.{column}: {e}").into(),
    )
}

pub(super) fn item(row: &Row<'_>) -> rusqlite::Result<QueueItem> {
    let kind: String = row.get(2)?;
    let options: String = row.get(3)?;
    let prompt_file: String = row.get(4)?;
    let after: String = row.get(8)?;
    let state: String = row.get(10)?;
    Ok(QueueItem {
        id: row.get(0)?,
        slug: row.get(1)?,
        kind: QueueKind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
        options: serde_json::from_str(&options).map_err(|e| corrupt("options", e))?,
        prompt_file: prompt_file.into(),
        commander: row.get(5)?,
        generation: row.get(6)?,
        fleet: row.get(7)?,
        after: serde_json::from_str(&after).map_err(|e| corrupt("after", e))?,
        not_before: row.get(9)?,
        state: QueueState::parse(&state).ok_or_else(|| corrupt("state", &state))?,
        reason: row.get(11)?,
        round: row.get(12)?,
        claimed_at: row.get(13)?,
        created_at: row.get(14)?,
        updated_at: row.get(15)?,
        claimed_by: row.get(16)?,
        prompt: row.get(17)?,
    })
}

pub(super) fn insert_item(
    tx: &rusqlite::Transaction<'_>,
    new: &NewQueued,
) -> Result<i64, StoreError> {
    let inserted = tx.execute(
        "INSERT INTO queue (slug, kind, options, prompt_file, commander, generation, fleet, \
         after, not_before, state, created_at, updated_at, prompt) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', ?10, ?10, ?11)",
        params![
            new.slug,
            new.kind.as_str(),
            new.options.to_string(),
            new.prompt_file.to_string_lossy(),
            new.commander,
            new.generation,
            new.fleet,
            to_json(&new.after)?,
            new.not_before,
            now_ms(),
            new.prompt,
        ],
    );
    match inserted {
        Ok(_) => Ok(tx.last_insert_rowid()),
        Err(e) if is_unique_violation(&e) => Err(StoreError::AlreadyQueued(new.slug.clone())),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn stored_item(
    tx: &rusqlite::Transaction<'_>,
    id: i64,
) -> Result<QueueItem, StoreError> {
    Ok(tx.query_row(
        &format!("SELECT {ITEM_COLUMNS} FROM queue WHERE id = ?1"),
        [id],
        item,
    )?)
}

/// Creates or replaces a fleet's row (its creation time stays the first one's).
pub(super) fn save_fleet_row(
    conn: &rusqlite::Connection,
    fleet: &FleetRecord,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO fleets (name, file, limits, created_at, remote) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT(name) DO UPDATE SET file = ?2, limits = ?3, remote = ?5",
        params![
            fleet.name,
            fleet.file,
            fleet.limits.to_string(),
            fleet.created_at,
            fleet.remote
        ],
    )?;
    Ok(())
}

impl SqliteStore {
    fn items(&self, filter: &str, value: Option<&str>) -> Result<Vec<QueueItem>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {ITEM_COLUMNS} FROM queue {filter} ORDER BY id"
        ))?;
        let rows = match value {
            Some(value) => statement.query_map([value], item)?,
            None => statement.query_map([], item)?,
        };
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

impl QueueStore for SqliteStore {
    fn enqueue(&mut self, new: &NewQueued) -> Result<QueueItem, StoreError> {
        let tx = self.write()?;
        let id = insert_item(&tx, new)?;
        let stored = stored_item(&tx, id)?;
        tx.commit()?;
        Ok(stored)
    }

    fn fleet_conflict(
        &self,
        fleet: &str,
        slugs: &[String],
    ) -> Result<Option<(String, SlugHolder)>, StoreError> {
        super::fleet_submit::conflict(&self.conn, fleet, slugs)
    }

    fn submit_fleet(
        &mut self,
        submission: &FleetSubmission,
    ) -> Result<Vec<Option<QueueItem>>, StoreError> {
        let tx = self.write()?;
        let queued = super::fleet_submit::submit(&tx, submission)?;
        tx.commit()?;
        Ok(queued)
    }

    fn waiting_starts(&self) -> Result<u64, StoreError> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM queue q WHERE kind = 'start' \
             AND state IN ('queued', 'delivering') \
             AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.slug = q.slug)",
            [],
            |row| row.get(0),
        )?)
    }

    fn move_and_enqueue(
        &mut self,
        id: i64,
        from: QueueState,
        to: QueueState,
        reason: Option<&str>,
        next: &NewQueued,
    ) -> Result<bool, StoreError> {
        let tx = self.write()?;
        let changed = tx.execute(
            "UPDATE queue SET state = ?3, reason = COALESCE(?4, reason), updated_at = ?5 \
             WHERE id = ?1 AND state = ?2",
            params![id, from.as_str(), to.as_str(), reason, now_ms()],
        )?;
        if changed == 0 {
            return Ok(false);
        }
        insert_item(&tx, next)?;
        tx.commit()?;
        Ok(true)
    }

    fn items_in(
        &self,
        states: &[QueueState],
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<QueueItem>, StoreError> {
        let states = crate::queue::state_list(states);
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT {ITEM_COLUMNS} FROM queue WHERE state IN ({states}) AND id > ?1 \
             ORDER BY id LIMIT ?2"
        ))?;
        let rows = statement.query_map(rusqlite::params![after_id, limit], item)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    fn slug_is_open(&self, slug: &str) -> Result<bool, StoreError> {
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT EXISTS (SELECT 1 FROM queue WHERE slug = ?1 AND state IN ({}))",
            crate::queue::state_list(&QueueState::OPEN)
        ))?;
        Ok(statement.query_row([slug], |row| row.get(0))?)
    }

    fn queue_items(&self, fleet: Option<&str>) -> Result<Vec<QueueItem>, StoreError> {
        match fleet {
            Some(name) => self.items("WHERE fleet = ?1", Some(name)),
            None => self.items("", None),
        }
    }

    fn queue_counts(&self, fleet: Option<&str>) -> Result<Vec<(QueueState, u64)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT state, count(*) FROM queue WHERE ?1 IS NULL OR fleet = ?1 GROUP BY state",
        )?;
        let rows = statement.query_map([fleet], |row| {
            let state: String = row.get(0)?;
            let count: i64 = row.get(1)?;
            let state = QueueState::parse(&state).ok_or_else(|| corrupt("state", &state))?;
            Ok((state, u64::try_from(count).unwrap_or(0)))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    fn move_item(
        &mut self,
        id: i64,
        from: QueueState,
        to: QueueState,
        reason: Option<&str>,
        round: Option<u32>,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        let claimed = (to == QueueState::Delivering).then_some(now);
        let tx = self.write()?;
        let changed = tx.execute(
            "UPDATE queue SET state = ?3, reason = COALESCE(?4, reason), \
             round = COALESCE(?5, round), claimed_at = COALESCE(?6, claimed_at), updated_at = ?7 \
             WHERE id = ?1 AND state = ?2",
            params![id, from.as_str(), to.as_str(), reason, round, claimed, now],
        )?;
        if changed > 0 && matches!(to, QueueState::Refused | QueueState::Stale) {
            // The commander who queued it learns why from its journal (`ganger watch`).
            let (task_id, kind, commander): (Option<i64>, String, String) = tx.query_row(
                "SELECT t.id, q.kind, q.commander FROM queue q \
                 LEFT JOIN tasks t ON t.slug = q.slug WHERE q.id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )?;
            if let Some(task_id) = task_id {
                super::journal(
                    &tx,
                    task_id,
                    None,
                    &format!("queue-{}", to.as_str()),
                    Some(&commander),
                    serde_json::json!({ "item": id, "kind": kind, "reason": reason }),
                )?;
            }
        }
        tx.commit()?;
        Ok(changed > 0)
    }

    fn claim_item(&mut self, id: i64, claimant: &ClaimKey) -> Result<bool, StoreError> {
        let now = now_ms();
        let changed = self.conn.execute(
            "UPDATE queue SET state = 'delivering', claimed_at = ?2, claimed_by = ?3, updated_at = ?2 \
             WHERE id = ?1 AND state = 'queued'",
            params![id, now, claimant.as_str()],
        )?;
        Ok(changed > 0)
    }

    fn take_over_item(
        &mut self,
        id: i64,
        from: Option<&str>,
        to: &ClaimKey,
    ) -> Result<bool, StoreError> {
        let changed = self.conn.execute(
            "UPDATE queue SET claimed_by = ?3, updated_at = ?4 \
             WHERE id = ?1 AND state IN ('delivering', 'delivered') AND claimed_by IS ?2",
            params![id, from, to.as_str(), now_ms()],
        )?;
        Ok(changed > 0)
    }

    fn requeue(
        &mut self,
        id: i64,
        not_before: i64,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE queue SET state = 'queued', not_before = ?2, reason = ?3, claimed_at = NULL, \
             claimed_by = NULL, round = NULL, updated_at = ?4 WHERE id = ?1",
            params![id, not_before, reason, now_ms()],
        )?;
        Ok(())
    }

    fn save_fleet(&mut self, fleet: &FleetRecord) -> Result<(), StoreError> {
        save_fleet_row(&self.conn, fleet)
    }

    fn fleets(&self) -> Result<Vec<FleetRecord>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT name, file, limits, created_at, remote FROM fleets ORDER BY name")?;
        let rows = statement.query_map([], |row| {
            let limits: String = row.get(2)?;
            Ok(FleetRecord {
                name: row.get(0)?,
                file: row.get(1)?,
                limits: serde_json::from_str(&limits).map_err(|e| corrupt("limits", e))?,
                created_at: row.get(3)?,
                remote: row.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    fn model_pauses(&self) -> Result<Vec<ModelPause>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT model, until, strikes, reason FROM model_pauses ORDER BY model")?;
        let rows = statement.query_map([], |row| {
            Ok(ModelPause {
                model: row.get(0)?,
                until: row.get(1)?,
                strikes: row.get(2)?,
                reason: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    fn pause_model(&mut self, pause: &ModelPause) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO model_pauses (model, until, strikes, reason) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(model) DO UPDATE SET until = ?2, strikes = ?3, reason = ?4",
            params![pause.model, pause.until, pause.strikes, pause.reason],
        )?;
        Ok(())
    }

    fn clear_pause(&mut self, model: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM model_pauses WHERE model = ?1", [model])?;
        Ok(())
    }

    fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "data_version", |row| row.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_item(slug: &str) -> NewQueued {
        NewQueued {
            slug: slug.into(),
            kind: QueueKind::Start,
            options: serde_json::json!({"agent": "command"}),
            prompt_file: "/tmp/p.md".into(),
            prompt: None,
            commander: "alice".into(),
            generation: None,
            fleet: Some("f".into()),
            after: vec!["other".into()],
            not_before: 0,
        }
    }

    #[test]
    fn an_item_is_claimed_once_and_moves_through_its_states() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
        let queued = store.enqueue(&new_item("a")).unwrap();
        assert_eq!(queued.state, QueueState::Queued);
        assert_eq!(queued.after, vec!["other".to_owned()]);
        assert!(
            store
                .move_item(
                    queued.id,
                    QueueState::Queued,
                    QueueState::Delivering,
                    None,
                    None
                )
                .unwrap()
        );
        assert!(
            !store
                .move_item(
                    queued.id,
                    QueueState::Queued,
                    QueueState::Delivering,
                    None,
                    None
                )
                .unwrap()
        );
        let claimed = &store.open_items().unwrap()[0];
        assert!(claimed.claimed_at.is_some());
        store
            .move_item(
                queued.id,
                QueueState::Delivering,
                QueueState::Delivered,
                None,
                Some(1),
            )
            .unwrap();
        store
            .move_item(
                queued.id,
                QueueState::Delivered,
                QueueState::Ended,
                None,
                None,
            )
            .unwrap();
        assert!(store.open_items().unwrap().is_empty());
        let all = store.queue_items(Some("f")).unwrap();
        assert_eq!((all[0].state, all[0].round), (QueueState::Ended, Some(1)));
        assert!(store.queue_items(Some("g")).unwrap().is_empty());
    }

    #[test]
    fn pauses_are_replaced_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
        let mut pause = ModelPause {
            model: "m/x".into(),
            until: 10,
            strikes: 1,
            reason: None,
        };
        store.pause_model(&pause).unwrap();
        pause.strikes = 2;
        store.pause_model(&pause).unwrap();
        assert_eq!(store.model_pauses().unwrap(), vec![pause]);
        store.clear_pause("m/x").unwrap();
        assert!(store.model_pauses().unwrap().is_empty());
    }
}
