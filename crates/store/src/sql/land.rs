//! [`LandStore`] for both backends: the `land_queue` and `land_batches` tables. Every change
//! of an item's state is journaled in its transaction.

use super::journal::{append, append_untasked};
use super::{Database, Param, Sql, bind};
use crate::error::StoreError;
use crate::journal::JournalEvent;
use crate::land::{LandBatch, LandItem, LandStore, NewLandItem};
use crate::liveness::ClaimKey;
use crate::records::now_ms;
use crate::sql::Row;
use serde_json::json;

/// The columns an item is read from, `q` being the queue and `t` its task.
const ITEM_COLUMNS: &str = "q.id, q.task_id, t.slug, q.base, q.task_commit, q.commander, \
     q.priority, q.queued_at, q.state, q.batch, q.reason, q.ended_at, q.fix";

const BATCH_COLUMNS: &str = "id, base, head, tip, state, lander, progress, started_at, ended_at";

fn item(row: &dyn Row) -> Result<LandItem, StoreError> {
    Ok(LandItem {
        id: row.get(0)?,
        task_id: row.get(1)?,
        slug: row.get(2)?,
        base: row.get(3)?,
        task_commit: row.get(4)?,
        commander: row.get(5)?,
        priority: row.get(6)?,
        queued_at: row.get(7)?,
        state: row.get(8)?,
        batch: row.get(9)?,
        reason: row.get(10)?,
        ended_at: row.get(11)?,
        fix: row.get(12)?,
    })
}

fn batch(row: &dyn Row) -> Result<LandBatch, StoreError> {
    Ok(LandBatch {
        id: row.get(0)?,
        base: row.get(1)?,
        head: row.get(2)?,
        tip: row.get(3)?,
        state: row.get(4)?,
        lander: ClaimKey::new(row.get::<String>(5)?),
        progress: row.json(6, "land_batches.progress")?,
        started_at: row.get(7)?,
        ended_at: row.get(8)?,
    })
}

fn items_where(
    sql: &mut dyn Sql,
    condition: &str,
    params: &[Param<'_>],
) -> Result<Vec<LandItem>, StoreError> {
    sql.rows(
        &format!(
            "SELECT {ITEM_COLUMNS} FROM land_queue q JOIN tasks t ON t.id = q.task_id \
             WHERE {condition} ORDER BY q.id"
        ),
        params,
        item,
    )
}

fn load_batch(sql: &mut dyn Sql, id: i64) -> Result<LandBatch, StoreError> {
    sql.one(
        &format!("SELECT {BATCH_COLUMNS} FROM land_batches WHERE id = ?1"),
        &bind![id],
        batch,
    )
}

/// A task that landed is in its base: what it conflicted with is now a conflict with the base,
/// which the other task's next round finds.
fn forget_conflicts(sql: &mut dyn Sql, slug: &str) -> Result<(), StoreError> {
    sql.execute(
        "DELETE FROM conflicts WHERE task = ?1 OR (other = ?1 AND NOT with_base)",
        &bind![slug],
    )?;
    Ok(())
}

impl<D: Database> LandStore for D {
    fn land_enqueue(&mut self, new: &NewLandItem) -> Result<Option<LandItem>, StoreError> {
        self.write(|sql| {
            let open: i64 = sql.value(
                "SELECT COUNT(*) FROM land_queue WHERE task_id = ?1 \
                 AND state IN ('queued', 'testing')",
                &bind![new.task_id],
            )?;
            if open > 0 {
                return Ok(None);
            }
            let id: i64 = sql.value(
                "INSERT INTO land_queue (task_id, base, task_commit, commander, priority, \
                 queued_at, state, fix) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7) \
                 RETURNING id",
                &bind![
                    new.task_id,
                    &new.base,
                    &new.task_commit,
                    &new.commander,
                    new.priority,
                    now_ms(),
                    new.fix
                ],
            )?;
            let queued = JournalEvent::LandQueued(json!({
                "item": id,
                "base": new.base,
                "commit": new.task_commit,
                "priority": new.priority,
            }));
            append(sql, new.task_id, None, Some(&new.commander), &queued)?;
            Ok(items_where(sql, "q.id = ?1", &bind![id])?.pop())
        })
    }

    fn land_items(&self, open: bool) -> Result<Vec<LandItem>, StoreError> {
        self.on_conn(|sql| {
            let condition = if open {
                "q.state IN ('queued', 'testing')"
            } else {
                "1 = 1"
            };
            items_where(sql, condition, &[])
        })
    }

    fn land_bases(&self) -> Result<Vec<String>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT DISTINCT base FROM land_queue WHERE state IN ('queued', 'testing') \
                 ORDER BY base",
                &[],
                |row| row.get(0),
            )
        })
    }

    fn land_take_batch(
        &mut self,
        base: &str,
        head: &str,
        lander: &ClaimKey,
        limit: u32,
    ) -> Result<Option<(LandBatch, Vec<LandItem>)>, StoreError> {
        self.write(|sql| {
            // The batch's checks run in one sandbox: the first item's kind and network take
            // the items that share them; the others wait for a batch of their own.
            let queued: Vec<(i64, String, String)> = sql.rows(
                "SELECT q.id, t.sandbox, t.network FROM land_queue q \
                 JOIN tasks t ON t.id = q.task_id WHERE q.base = ?1 AND q.state = 'queued' \
                 ORDER BY q.priority DESC, q.queued_at, q.id",
                &bind![base],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )?;
            let Some((_, sandbox, network)) = queued.first().cloned() else {
                return Ok(None);
            };
            let ids: Vec<i64> = queued
                .into_iter()
                .filter(|(_, s, n)| *s == sandbox && *n == network)
                .map(|(id, _, _)| id)
                .take(limit as usize)
                .collect();
            let id: i64 = sql.value(
                "INSERT INTO land_batches (base, head, state, lander, progress, started_at) \
                 VALUES (?1, ?2, 'testing', ?3, '{}', ?4) RETURNING id",
                &bind![base, head, lander.as_str(), now_ms()],
            )?;
            let mut taken = Vec::new();
            for item_id in ids {
                sql.execute(
                    "UPDATE land_queue SET state = 'testing', batch = ?2 WHERE id = ?1",
                    &bind![item_id, id],
                )?;
                taken.extend(items_where(sql, "q.id = ?1", &bind![item_id])?);
            }
            Ok(Some((load_batch(sql, id)?, taken)))
        })
    }

    fn land_progress(
        &mut self,
        batch: i64,
        progress: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "UPDATE land_batches SET progress = ?2 WHERE id = ?1",
                &[Param::from(batch), Param::json(progress)?],
            )
        })?;
        Ok(())
    }

    fn land_step(&mut self, commander: &str, detail: serde_json::Value) -> Result<(), StoreError> {
        self.on_conn(|sql| append_untasked(sql, commander, &JournalEvent::LandStep(detail)))?;
        Ok(())
    }

    fn land_return(
        &mut self,
        item_id: i64,
        reason: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        self.write(|sql| {
            let Some(found) =
                items_where(sql, "q.id = ?1 AND q.state = 'testing'", &bind![item_id])?.pop()
            else {
                return Ok(());
            };
            sql.execute(
                "UPDATE land_queue SET state = 'returned', reason = ?2, ended_at = ?3 \
                 WHERE id = ?1",
                &bind![item_id, reason, now_ms()],
            )?;
            let mut detail = detail;
            if let Some(fields) = detail.as_object_mut() {
                fields.insert("item".into(), json!(item_id));
                fields.insert("batch".into(), json!(found.batch));
                fields.insert("reason".into(), json!(reason));
            }
            append(
                sql,
                found.task_id,
                None,
                Some(&found.commander),
                &JournalEvent::LandReturned(detail),
            )?;
            Ok(())
        })
    }

    fn land_already(&mut self, item_id: i64) -> Result<(), StoreError> {
        self.write(|sql| {
            let Some(found) =
                items_where(sql, "q.id = ?1 AND q.state = 'testing'", &bind![item_id])?.pop()
            else {
                return Ok(());
            };
            sql.execute(
                "UPDATE land_queue SET state = 'landed', ended_at = ?2 WHERE id = ?1",
                &bind![item_id, now_ms()],
            )?;
            forget_conflicts(sql, &found.slug)?;
            let event = JournalEvent::Landed(json!({
                "item": item_id,
                "batch": found.batch,
                "base": found.base,
                "commit": null,
                "already": true,
            }));
            append(sql, found.task_id, None, Some(&found.commander), &event)?;
            Ok(())
        })
    }

    fn land_landing(&mut self, batch_id: i64, tip: &str) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "UPDATE land_batches SET state = 'landing', tip = ?2 \
                 WHERE id = ?1 AND state IN ('testing', 'landing')",
                &bind![batch_id, tip],
            )
        })?;
        Ok(())
    }

    fn land_finish(&mut self, batch_id: i64, landed: bool) -> Result<bool, StoreError> {
        self.write(|sql| {
            let found = load_batch(sql, batch_id)?;
            if !matches!(found.state.as_str(), "testing" | "landing") {
                return Ok(false);
            }
            let open = items_where(
                sql,
                "q.batch = ?1 AND q.state = 'testing'",
                &bind![batch_id],
            )?;
            let now = now_ms();
            let state = match (landed, open.is_empty()) {
                (true, _) => "landed",
                (false, true) => "empty",
                (false, false) => "abandoned",
            };
            sql.execute(
                "UPDATE land_batches SET state = ?2, ended_at = ?3 WHERE id = ?1",
                &bind![batch_id, state, now],
            )?;
            for each in open {
                if landed {
                    sql.execute(
                        "UPDATE land_queue SET state = 'landed', ended_at = ?2 WHERE id = ?1",
                        &bind![each.id, now],
                    )?;
                    forget_conflicts(sql, &each.slug)?;
                    let event = JournalEvent::Landed(json!({
                        "item": each.id,
                        "batch": batch_id,
                        "base": found.base,
                        "commit": found.tip,
                    }));
                    append(sql, each.task_id, None, Some(&each.commander), &event)?;
                } else {
                    sql.execute(
                        "UPDATE land_queue SET state = 'queued', batch = NULL WHERE id = ?1",
                        &bind![each.id],
                    )?;
                }
            }
            Ok(true)
        })
    }

    fn land_open_batches(&self, base: &str) -> Result<Vec<LandBatch>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                &format!(
                    "SELECT {BATCH_COLUMNS} FROM land_batches WHERE base = ?1 \
                     AND state IN ('testing', 'landing') ORDER BY id"
                ),
                &bind![base],
                batch,
            )
        })
    }

    fn land_batches(&self, limit: u32) -> Result<Vec<LandBatch>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                &format!("SELECT {BATCH_COLUMNS} FROM land_batches ORDER BY id DESC LIMIT ?1"),
                &bind![limit],
                batch,
            )
        })
    }
}
