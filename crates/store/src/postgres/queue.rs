//! The PostgreSQL side of [`QueueStore`]: the `queue`, `fleets` and `model_pauses` tables.
//! Every move of an item is one `UPDATE … WHERE state = $from`, so two schedulers could never
//! both claim one item.

use super::conn::Query;
use super::errors::is_unique_violation;
use super::fence::still_held;
use super::listen::QUEUE_CHANGE;
use super::rows::{self, narrow_opt};
use super::{PgStore, to_json, write};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use crate::queue::{
    FleetRecord, FleetSubmission, ModelPause, NewQueued, QueueItem, QueueKind, QueueState,
    QueueStore, SlugHolder,
};
use crate::records::now_ms;
use postgres::Row;

const ITEM_COLUMNS: &str = "id, slug, kind, options, prompt_file, commander, generation, fleet, \
     after, not_before, state, reason, round, claimed_at, created_at, updated_at, claimed_by, prompt";

fn corrupt(column: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("queue.{column}: {e}"))
}

fn item(row: &Row) -> Result<QueueItem, StoreError> {
    let kind: String = row.try_get(2)?;
    let options: String = row.try_get(3)?;
    let prompt_file: String = row.try_get(4)?;
    let after: String = row.try_get(8)?;
    let state: String = row.try_get(10)?;
    Ok(QueueItem {
        id: row.try_get(0)?,
        slug: row.try_get(1)?,
        kind: QueueKind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
        options: serde_json::from_str(&options).map_err(|e| corrupt("options", e))?,
        prompt_file: prompt_file.into(),
        commander: row.try_get(5)?,
        generation: row.try_get(6)?,
        fleet: row.try_get(7)?,
        after: serde_json::from_str(&after).map_err(|e| corrupt("after", e))?,
        not_before: row.try_get(9)?,
        state: QueueState::parse(&state).ok_or_else(|| corrupt("state", &state))?,
        reason: row.try_get(11)?,
        round: narrow_opt(row.try_get(12)?, "round")?,
        claimed_at: row.try_get(13)?,
        created_at: row.try_get(14)?,
        updated_at: row.try_get(15)?,
        claimed_by: row.try_get(16)?,
        prompt: row.try_get(17)?,
    })
}

/// Queues `new`; `AlreadyQueued` when a unique index refuses it.
pub(crate) fn insert_item(tx: &mut impl Query, new: &NewQueued) -> Result<QueueItem, StoreError> {
    // Heard by the schedulers when the transaction commits (several in one are one).
    tx.execute("SELECT pg_notify($1, $1)", &[&QUEUE_CHANGE])?;
    let inserted = tx.query_one(
        &format!(
            "INSERT INTO queue (slug, kind, options, prompt_file, commander, generation, fleet, \
             after, not_before, state, created_at, updated_at, prompt) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', $10, $10, $11) \
             RETURNING {ITEM_COLUMNS}"
        ),
        &[
            &new.slug,
            &new.kind.as_str(),
            &new.options.to_string(),
            &new.prompt_file.to_string_lossy().into_owned(),
            &new.commander,
            &new.generation,
            &new.fleet,
            &to_json(&new.after)?,
            &new.not_before,
            &now_ms(),
            &new.prompt,
        ],
    );
    match inserted {
        Ok(row) => item(&row),
        Err(e) if is_unique_violation(&e) => Err(StoreError::AlreadyQueued(new.slug.clone())),
        Err(e) => Err(e.into()),
    }
}

/// Creates or replaces a fleet's row (its creation time stays the first one's).
pub(crate) fn save_fleet_row(conn: &mut impl Query, fleet: &FleetRecord) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO fleets (name, file, limits, created_at, remote) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (name) DO UPDATE SET file = $2, limits = $3, remote = $5",
        &[
            &fleet.name,
            &fleet.file,
            &fleet.limits.to_string(),
            &fleet.created_at,
            &fleet.remote,
        ],
    )?;
    Ok(())
}

impl PgStore {
    fn items(&self, filter: &str, value: Option<&str>) -> Result<Vec<QueueItem>, StoreError> {
        let sql = format!("SELECT {ITEM_COLUMNS} FROM queue {filter} ORDER BY id");
        let mut conn = self.conn()?;
        let found = match value {
            Some(value) => conn.query(&sql, &[&value])?,
            None => conn.query(&sql, &[])?,
        };
        rows::all(found, item)
    }
}

impl QueueStore for PgStore {
    fn enqueue(&mut self, new: &NewQueued) -> Result<QueueItem, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let stored = insert_item(&mut tx, new)?;
        tx.commit()?;
        Ok(stored)
    }

    fn fleet_conflict(
        &self,
        fleet: &str,
        slugs: &[String],
    ) -> Result<Option<(String, SlugHolder)>, StoreError> {
        super::fleet_submit::conflict(&mut *self.conn()?, fleet, slugs)
    }

    fn submit_fleet(
        &mut self,
        submission: &FleetSubmission,
    ) -> Result<Vec<Option<QueueItem>>, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let queued = super::fleet_submit::submit(&mut tx, submission)?;
        tx.commit()?;
        Ok(queued)
    }

    fn waiting_starts(&self) -> Result<u64, StoreError> {
        let row = self.conn()?.query_one(
            "SELECT COUNT(*) FROM queue q WHERE kind = 'start' \
             AND state IN ('queued', 'delivering') \
             AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.slug = q.slug)",
            &[],
        )?;
        Ok(u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0))
    }

    fn move_and_enqueue(
        &mut self,
        id: i64,
        from: QueueState,
        to: QueueState,
        reason: Option<&str>,
        next: &NewQueued,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let changed = tx.execute(
            "UPDATE queue SET state = $3, reason = COALESCE($4, reason), updated_at = $5 \
             WHERE id = $1 AND state = $2",
            &[&id, &from.as_str(), &to.as_str(), &reason, &now_ms()],
        )?;
        if changed == 0 {
            return Ok(false);
        }
        insert_item(&mut tx, next)?;
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
        let found = self.conn()?.query(
            &format!(
                "SELECT {ITEM_COLUMNS} FROM queue WHERE state IN ({states}) AND id > $1 \
                 ORDER BY id LIMIT $2"
            ),
            &[&after_id, &i64::from(limit)],
        )?;
        rows::all(found, item)
    }

    fn slug_is_open(&self, slug: &str) -> Result<bool, StoreError> {
        let row = self.conn()?.query_one(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM queue WHERE slug = $1 AND state IN ({}))",
                crate::queue::state_list(&QueueState::OPEN)
            ),
            &[&slug],
        )?;
        Ok(row.try_get(0)?)
    }

    fn queue_items(&self, fleet: Option<&str>) -> Result<Vec<QueueItem>, StoreError> {
        match fleet {
            Some(name) => self.items("WHERE fleet = $1", Some(name)),
            None => self.items("", None),
        }
    }

    fn queue_counts(&self, fleet: Option<&str>) -> Result<Vec<(QueueState, u64)>, StoreError> {
        let mut conn = self.conn()?;
        let rows = conn.query(
            "SELECT state, count(*) FROM queue WHERE $1::text IS NULL OR fleet = $1 \
             GROUP BY state",
            &[&fleet],
        )?;
        let mut counts = Vec::with_capacity(rows.len());
        for row in rows {
            let state: String = row.try_get(0)?;
            let count: i64 = row.try_get(1)?;
            let state = QueueState::parse(&state).ok_or_else(|| corrupt("state", &state))?;
            counts.push((state, u64::try_from(count).unwrap_or(0)));
        }
        Ok(counts)
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
        let update = "UPDATE queue SET state = $3, reason = COALESCE($4, reason), \
             round = COALESCE($5, round), claimed_at = COALESCE($6, claimed_at), updated_at = $7 \
             WHERE id = $1 AND state = $2";
        let journaled = matches!(to, QueueState::Refused | QueueState::Stale);
        let mut conn = self.conn()?;
        if !journaled {
            // One statement, which the row's lock makes atomic (a second mover waits, then
            // finds the state changed): no write lock, which only a journal entry needs (its
            // ids must commit in order).
            conn.ensure_open()?;
            let changed = conn.execute(
                update,
                &[
                    &id,
                    &from.as_str(),
                    &to.as_str(),
                    &reason,
                    &round.map(i64::from),
                    &claimed,
                    &now,
                ],
            )?;
            return Ok(changed > 0);
        }
        let mut tx = write(&mut conn)?;
        let changed = tx.execute(
            update,
            &[
                &id,
                &from.as_str(),
                &to.as_str(),
                &reason,
                &round.map(i64::from),
                &claimed,
                &now,
            ],
        )?;
        if changed > 0 {
            // The commander who queued it learns why from its journal (`ganger watch`).
            let row = tx.query_one(
                "SELECT t.id, q.kind, q.commander FROM queue q \
                 LEFT JOIN tasks t ON t.slug = q.slug WHERE q.id = $1",
                &[&id],
            )?;
            let task_id: Option<i64> = row.try_get(0)?;
            let kind: String = row.try_get(1)?;
            let commander: String = row.try_get(2)?;
            if let Some(task_id) = task_id {
                super::journal(
                    &mut tx,
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
        // A row another scheduler is claiming is skipped, not waited for: it is theirs. A
        // claimant whose lease this process held and lost (cut off past it: the others hold
        // it dead) claims nothing.
        let (names, fences) = self.pool.fences.arrays();
        let changed = self.conn()?.execute(
            &format!(
                "UPDATE queue SET state = 'delivering', claimed_at = $2, claimed_by = $3, \
                 updated_at = $2 \
                 WHERE id = (SELECT id FROM queue WHERE id = $1 AND state = 'queued' \
                             FOR UPDATE SKIP LOCKED) AND {}",
                still_held("$3", "$4", "$5")
            ),
            &[&id, &now_ms(), &claimant.as_str(), &names, &fences],
        )?;
        Ok(changed > 0)
    }

    fn take_over_item(
        &mut self,
        id: i64,
        from: Option<&str>,
        to: &ClaimKey,
    ) -> Result<bool, StoreError> {
        let (names, fences) = self.pool.fences.arrays();
        let changed = self.conn()?.execute(
            &format!(
                "UPDATE queue SET claimed_by = $3, updated_at = $4 \
                 WHERE id = $1 AND state IN ('delivering', 'delivered') \
                 AND claimed_by IS NOT DISTINCT FROM $2 AND {}",
                still_held("$3", "$5", "$6")
            ),
            &[&id, &from, &to.as_str(), &now_ms(), &names, &fences],
        )?;
        Ok(changed > 0)
    }

    fn requeue(
        &mut self,
        id: i64,
        not_before: i64,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "WITH back AS (UPDATE queue SET state = 'queued', not_before = $2, reason = $3, \
             claimed_at = NULL, claimed_by = NULL, round = NULL, updated_at = $4 WHERE id = $1 \
             RETURNING 1) SELECT pg_notify($5, $5) FROM back",
            &[&id, &not_before, &reason, &now_ms(), &QUEUE_CHANGE],
        )?;
        Ok(())
    }

    fn save_fleet(&mut self, fleet: &FleetRecord) -> Result<(), StoreError> {
        save_fleet_row(&mut *self.conn()?, fleet)
    }

    fn fleets(&self) -> Result<Vec<FleetRecord>, StoreError> {
        let found = self.conn()?.query(
            "SELECT name, file, limits, created_at, remote FROM fleets ORDER BY name",
            &[],
        )?;
        rows::all(found, |row| {
            let limits: String = row.try_get(2)?;
            Ok(FleetRecord {
                name: row.try_get(0)?,
                file: row.try_get(1)?,
                limits: serde_json::from_str(&limits).map_err(|e| corrupt("limits", e))?,
                created_at: row.try_get(3)?,
                remote: row.try_get(4)?,
            })
        })
    }

    fn model_pauses(&self) -> Result<Vec<ModelPause>, StoreError> {
        let found = self.conn()?.query(
            "SELECT model, until, strikes, reason FROM model_pauses ORDER BY model",
            &[],
        )?;
        rows::all(found, |row| {
            Ok(ModelPause {
                model: row.try_get(0)?,
                until: row.try_get(1)?,
                strikes: rows::narrow(row.try_get(2)?, "strikes")?,
                reason: row.try_get(3)?,
            })
        })
    }

    fn pause_model(&mut self, pause: &ModelPause) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO model_pauses (model, until, strikes, reason) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (model) DO UPDATE SET until = $2, strikes = $3, reason = $4",
            &[
                &pause.model,
                &pause.until,
                &i64::from(pause.strikes),
                &pause.reason,
            ],
        )?;
        Ok(())
    }

    fn clear_pause(&mut self, model: &str) -> Result<(), StoreError> {
        self.conn()?
            .execute("DELETE FROM model_pauses WHERE model = $1", &[&model])?;
        Ok(())
    }

    /// The server's current snapshot (`xmin:xmax:running`), hashed: it changes whenever any
    /// transaction that wrote commits (and sometimes when nothing here changed, which only
    /// costs a poll a needless read).
    fn data_version(&self) -> Result<i64, StoreError> {
        use std::hash::{Hash, Hasher};
        let row = self
            .conn()?
            .query_one("SELECT pg_current_snapshot()::text", &[])?;
        let snapshot: String = row.try_get(0)?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        snapshot.hash(&mut hasher);
        Ok(hasher.finish() as i64)
    }
}
