//! [`QueueStore`] for both backends: the `queue`, `fleets` and `model_pauses` tables. Every
//! move of an item is one `UPDATE … WHERE state = ?from`, so two schedulers could never both
//! claim one item.

use super::row::Row;
use super::{Database, Param, Sql, bind, journal};
use crate::error::StoreError;
use crate::journal::{JournalEvent, Undelivered};
use crate::liveness::ClaimKey;
use crate::queue::{
    FleetRecord, FleetSubmission, ModelPause, NewQueued, QueueItem, QueueKind, QueueState,
    QueueStore, SlugHolder, state_list,
};
use crate::records::now_ms;

const ITEM_COLUMNS: &str = "id, slug, kind, options, prompt_file, commander, generation, fleet, \
     after, not_before, state, reason, round, claimed_at, created_at, updated_at, claimed_by, prompt";

fn corrupt(column: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("queue.{column}: {e}"))
}

fn kind(text: &str) -> Result<QueueKind, StoreError> {
    QueueKind::parse(text).ok_or_else(|| corrupt("kind", text))
}

fn state(text: &str) -> Result<QueueState, StoreError> {
    QueueState::parse(text).ok_or_else(|| corrupt("state", text))
}

/// An item, from [`ITEM_COLUMNS`].
fn item(row: &dyn Row) -> Result<QueueItem, StoreError> {
    Ok(QueueItem {
        id: row.get(0)?,
        slug: row.get(1)?,
        kind: kind(&row.get::<String>(2)?)?,
        options: row.json(3, "queue.options")?,
        prompt_file: row.get(4)?,
        commander: row.get(5)?,
        generation: row.get(6)?,
        fleet: row.get(7)?,
        after: row.json(8, "queue.after")?,
        not_before: row.get(9)?,
        state: state(&row.get::<String>(10)?)?,
        reason: row.get(11)?,
        round: row.get(12)?,
        claimed_at: row.get(13)?,
        created_at: row.get(14)?,
        updated_at: row.get(15)?,
        claimed_by: row.get(16)?,
        prompt: row.get(17)?,
    })
}

/// Queues `new` and wakes the schedulers; `AlreadyQueued` when a unique index refuses it.
pub(crate) fn insert_item(
    db: &impl Database,
    sql: &mut dyn Sql,
    new: &NewQueued,
) -> Result<QueueItem, StoreError> {
    db.wake_schedulers(sql)?;
    let inserted = sql.one(
        &format!(
            "INSERT INTO queue (slug, kind, options, prompt_file, commander, generation, fleet, \
             after, not_before, state, created_at, updated_at, prompt) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', ?10, ?10, ?11) \
             RETURNING {ITEM_COLUMNS}"
        ),
        &[
            Param::from(&new.slug),
            Param::from(new.kind.as_str()),
            Param::from(new.options.to_string()),
            Param::from(&new.prompt_file),
            Param::from(&new.commander),
            Param::from(new.generation),
            Param::from(new.fleet.as_deref()),
            Param::json(&new.after)?,
            Param::from(new.not_before),
            Param::from(now_ms()),
            Param::from(new.prompt.as_deref()),
        ],
        item,
    );
    match inserted {
        Err(e) if sql.is_unique_violation(&e) => Err(StoreError::AlreadyQueued(new.slug.clone())),
        other => other,
    }
}

/// Creates or replaces a fleet's row (its creation time stays the first one's).
pub(crate) fn save_fleet_row(sql: &mut dyn Sql, fleet: &FleetRecord) -> Result<(), StoreError> {
    sql.execute(
        "INSERT INTO fleets (name, file, limits, created_at, remote) VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (name) DO UPDATE SET file = ?2, limits = ?3, remote = ?5",
        &bind![
            &fleet.name,
            fleet.file.as_deref(),
            fleet.limits.to_string(),
            fleet.created_at,
            fleet.remote.as_deref()
        ],
    )?;
    Ok(())
}

/// Moves an item from `from` to `to` (one statement); how many rows it changed.
fn move_row(
    sql: &mut dyn Sql,
    id: i64,
    (from, to): (QueueState, QueueState),
    reason: Option<&str>,
    round: Option<u32>,
    now: i64,
) -> Result<u64, StoreError> {
    let claimed = (to == QueueState::Delivering).then_some(now);
    sql.execute(
        "UPDATE queue SET state = ?3, reason = COALESCE(?4, reason), \
         round = COALESCE(?5, round), claimed_at = COALESCE(?6, claimed_at), updated_at = ?7 \
         WHERE id = ?1 AND state = ?2",
        &bind![id, from.as_str(), to.as_str(), reason, round, claimed, now],
    )
}

/// Journals that item `id` was refused or went stale, for the commander who queued it.
fn journal_undelivered(
    sql: &mut dyn Sql,
    id: i64,
    to: QueueState,
    reason: Option<&str>,
) -> Result<(), StoreError> {
    let (task_id, kind, commander): (Option<i64>, QueueKind, String) = sql.one(
        "SELECT t.id, q.kind, q.commander FROM queue q \
         LEFT JOIN tasks t ON t.slug = q.slug WHERE q.id = ?1",
        &bind![id],
        |row| Ok((row.get(0)?, kind(&row.get::<String>(1)?)?, row.get(2)?)),
    )?;
    let undelivered = Undelivered {
        item: id,
        kind,
        reason: reason.map(str::to_owned),
    };
    let event = match to {
        QueueState::Stale => JournalEvent::QueueStale(undelivered),
        _ => JournalEvent::QueueRefused(undelivered),
    };
    if let Some(task_id) = task_id {
        journal::append(sql, task_id, None, Some(&commander), &event)?;
    }
    Ok(())
}

impl<D: Database> QueueStore for D {
    fn enqueue(&mut self, new: &NewQueued) -> Result<QueueItem, StoreError> {
        let db: &Self = self;
        db.write(|sql| insert_item(db, sql, new))
    }

    fn fleet_conflict(
        &self,
        fleet: &str,
        slugs: &[String],
    ) -> Result<Option<(String, SlugHolder)>, StoreError> {
        self.on_conn(|sql| super::fleet_submit::conflict(sql, fleet, slugs))
    }

    fn submit_fleet(
        &mut self,
        submission: &FleetSubmission,
    ) -> Result<Vec<Option<QueueItem>>, StoreError> {
        let db: &Self = self;
        db.write(|sql| super::fleet_submit::submit(db, sql, submission))
    }

    fn waiting_starts(&self) -> Result<u64, StoreError> {
        let count: i64 = self.on_conn(|sql| {
            sql.value(
                "SELECT COUNT(*) FROM queue q WHERE kind = 'start' \
                 AND state IN ('queued', 'delivering') \
                 AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.slug = q.slug)",
                &[],
            )
        })?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    fn move_and_enqueue(
        &mut self,
        id: i64,
        from: QueueState,
        to: QueueState,
        reason: Option<&str>,
        next: &NewQueued,
    ) -> Result<bool, StoreError> {
        let db: &Self = self;
        db.write(|sql| {
            let changed = sql.execute(
                "UPDATE queue SET state = ?3, reason = COALESCE(?4, reason), updated_at = ?5 \
                 WHERE id = ?1 AND state = ?2",
                &bind![id, from.as_str(), to.as_str(), reason, now_ms()],
            )?;
            if changed == 0 {
                return Ok(false);
            }
            insert_item(db, sql, next)?;
            Ok(true)
        })
    }

    fn items_in(
        &self,
        states: &[QueueState],
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<QueueItem>, StoreError> {
        let states = state_list(states);
        self.on_conn(|sql| {
            sql.rows(
                &format!(
                    "SELECT {ITEM_COLUMNS} FROM queue WHERE state IN ({states}) AND id > ?1 \
                     ORDER BY id LIMIT ?2"
                ),
                &bind![after_id, limit],
                item,
            )
        })
    }

    fn slug_is_open(&self, slug: &str) -> Result<bool, StoreError> {
        self.on_conn(|sql| {
            sql.value(
                &format!(
                    "SELECT EXISTS (SELECT 1 FROM queue WHERE slug = ?1 AND state IN ({}))",
                    state_list(&QueueState::OPEN)
                ),
                &bind![slug],
            )
        })
    }

    fn queue_items(&self, fleet: Option<&str>) -> Result<Vec<QueueItem>, StoreError> {
        self.on_conn(|sql| match fleet {
            Some(name) => sql.rows(
                &format!("SELECT {ITEM_COLUMNS} FROM queue WHERE fleet = ?1 ORDER BY id"),
                &bind![name],
                item,
            ),
            None => sql.rows(
                &format!("SELECT {ITEM_COLUMNS} FROM queue ORDER BY id"),
                &[],
                item,
            ),
        })
    }

    fn queue_counts(&self, fleet: Option<&str>) -> Result<Vec<(QueueState, u64)>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT state, count(*) FROM queue \
                 WHERE CAST(?1 AS TEXT) IS NULL OR fleet = ?1 GROUP BY state",
                &bind![fleet],
                |row| {
                    let count: i64 = row.get(1)?;
                    Ok((
                        state(&row.get::<String>(0)?)?,
                        u64::try_from(count).unwrap_or(0),
                    ))
                },
            )
        })
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
        if !matches!(to, QueueState::Refused | QueueState::Stale) {
            // One statement, which the row's lock makes atomic (a second mover waits, then
            // finds the state changed): no write lock, which only a journal entry needs (its
            // ids must commit in order).
            let changed =
                self.on_checked_conn(|sql| move_row(sql, id, (from, to), reason, round, now))?;
            return Ok(changed > 0);
        }
        self.write(|sql| {
            let changed = move_row(sql, id, (from, to), reason, round, now)?;
            if changed > 0 {
                // The commander who queued it learns why from its journal (`ganger watch`).
                journal_undelivered(sql, id, to, reason)?;
            }
            Ok(changed > 0)
        })
    }

    fn claim_item(&mut self, id: i64, claimant: &ClaimKey) -> Result<bool, StoreError> {
        // A row another scheduler is claiming is skipped, not waited for: it is theirs. A
        // claimant whose claim this process held and lost (cut off past its lease: the others
        // hold it dead) claims nothing.
        let fence = self.fence("?3", 4);
        let changed = self.on_conn(|sql| {
            let statement = format!(
                "UPDATE queue SET state = 'delivering', claimed_at = ?2, claimed_by = ?3, \
                 updated_at = ?2 \
                 WHERE id = (SELECT id FROM queue WHERE id = ?1 AND state = 'queued'{}){}",
                sql.dialect().skip_claimed(),
                fence.condition
            );
            let mut params = bind![id, now_ms(), claimant.as_str()].to_vec();
            params.extend(fence.params.iter().cloned());
            sql.execute(&statement, &params)
        })?;
        Ok(changed > 0)
    }

    fn take_over_item(
        &mut self,
        id: i64,
        from: Option<&str>,
        to: &ClaimKey,
    ) -> Result<bool, StoreError> {
        let fence = self.fence("?3", 5);
        let changed = self.on_conn(|sql| {
            let statement = format!(
                "UPDATE queue SET claimed_by = ?3, updated_at = ?4 \
                 WHERE id = ?1 AND state IN ('delivering', 'delivered') \
                 AND claimed_by IS NOT DISTINCT FROM ?2{}",
                fence.condition
            );
            let mut params = bind![id, from, to.as_str(), now_ms()].to_vec();
            params.extend(fence.params.iter().cloned());
            sql.execute(&statement, &params)
        })?;
        Ok(changed > 0)
    }

    fn requeue(
        &mut self,
        id: i64,
        not_before: i64,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        let db: &Self = self;
        db.on_conn(|sql| {
            let changed = sql.execute(
                "UPDATE queue SET state = 'queued', not_before = ?2, reason = ?3, \
                 claimed_at = NULL, claimed_by = NULL, round = NULL, updated_at = ?4 \
                 WHERE id = ?1",
                &bind![id, not_before, reason, now_ms()],
            )?;
            if changed > 0 {
                db.wake_schedulers(sql)?;
            }
            Ok(())
        })
    }

    fn save_fleet(&mut self, fleet: &FleetRecord) -> Result<(), StoreError> {
        self.on_conn(|sql| save_fleet_row(sql, fleet))
    }

    fn fleets(&self) -> Result<Vec<FleetRecord>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT name, file, limits, created_at, remote FROM fleets ORDER BY name",
                &[],
                |row| {
                    Ok(FleetRecord {
                        name: row.get(0)?,
                        file: row.get(1)?,
                        limits: row.json(2, "fleets.limits")?,
                        created_at: row.get(3)?,
                        remote: row.get(4)?,
                    })
                },
            )
        })
    }

    fn model_pauses(&self) -> Result<Vec<ModelPause>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT model, until, strikes, reason FROM model_pauses ORDER BY model",
                &[],
                |row| {
                    Ok(ModelPause {
                        model: row.get(0)?,
                        until: row.get(1)?,
                        strikes: row.get(2)?,
                        reason: row.get(3)?,
                    })
                },
            )
        })
    }

    fn pause_model(&mut self, pause: &ModelPause) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "INSERT INTO model_pauses (model, until, strikes, reason) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (model) DO UPDATE SET until = ?2, strikes = ?3, reason = ?4",
                &bind![
                    &pause.model,
                    pause.until,
                    pause.strikes,
                    pause.reason.as_deref()
                ],
            )
        })?;
        Ok(())
    }

    fn clear_pause(&mut self, model: &str) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute("DELETE FROM model_pauses WHERE model = ?1", &bind![model])
        })?;
        Ok(())
    }

    fn data_version(&self) -> Result<i64, StoreError> {
        self.committed_version()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqliteStore;

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
        let step = |store: &mut SqliteStore, from, to, round| {
            store.move_item(queued.id, from, to, None, round).unwrap()
        };
        use QueueState::{Delivered, Delivering, Ended, Queued};
        assert!(step(&mut store, Queued, Delivering, None));
        assert!(!step(&mut store, Queued, Delivering, None));
        let claimed = &store.open_items().unwrap()[0];
        assert!(claimed.claimed_at.is_some());
        step(&mut store, Delivering, Delivered, Some(1));
        step(&mut store, Delivered, Ended, None);
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
