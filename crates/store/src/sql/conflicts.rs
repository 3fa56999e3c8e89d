//! [`ConflictStore`] for both backends: the `conflicts` table, a row per pair.

use super::journal::append;
use super::{Database, Param, Row, bind};
use crate::conflicts::{ConflictStore, OpenSnapshot, PredictedConflict};
use crate::error::StoreError;
use crate::journal::JournalEvent;
use crate::records::now_ms;
use serde_json::json;

fn conflict(row: &dyn Row) -> Result<PredictedConflict, StoreError> {
    Ok(PredictedConflict {
        task: row.get(0)?,
        other: row.get(1)?,
        with_base: row.get(2)?,
        files: row.json(3, "conflicts.detail")?,
    })
}

impl<D: Database> ConflictStore for D {
    fn record_conflicts(
        &mut self,
        task_id: i64,
        slug: &str,
        round: Option<u32>,
        commander: Option<&str>,
        found: &[PredictedConflict],
    ) -> Result<(), StoreError> {
        let known_of = |sql: &mut dyn super::Sql| {
            sql.rows(
                "SELECT task, other, with_base, detail FROM conflicts \
                 WHERE task = ?1 OR (other = ?1 AND NOT with_base)",
                &bind![slug],
                conflict,
            )
        };
        // Nothing found, and nothing known to clear (most rounds): no write, so no write
        // lock and no transaction, one statement (as if this ran before any other writer).
        if found.is_empty() && self.again_if_cut(known_of)?.is_empty() {
            return Ok(());
        }
        self.write(|sql| {
            let known = known_of(sql)?;
            let same = |a: &PredictedConflict, b: &PredictedConflict| {
                a.task == b.task && a.other == b.other && a.with_base == b.with_base
            };
            for gone in known.iter().filter(|k| !found.iter().any(|f| same(f, k))) {
                sql.execute(
                    "DELETE FROM conflicts WHERE task = ?1 AND other = ?2 AND with_base = ?3",
                    &bind![&gone.task, &gone.other, gone.with_base],
                )?;
                let event = JournalEvent::ConflictCleared(json!({
                    "tasks": [gone.task, gone.other],
                    "with_base": gone.with_base,
                }));
                append(sql, task_id, round, commander, &event)?;
            }
            for pair in found {
                let new = !known.iter().any(|k| same(k, pair));
                sql.execute(
                    "INSERT INTO conflicts (task, other, with_base, detail, at) \
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (task, other, with_base) \
                     DO UPDATE SET detail = excluded.detail, at = excluded.at",
                    &[
                        Param::from(&pair.task),
                        Param::from(&pair.other),
                        Param::from(pair.with_base),
                        Param::json(&pair.files)?,
                        Param::from(now_ms()),
                    ],
                )?;
                if new {
                    let event = JournalEvent::Conflict(json!({
                        "tasks": [pair.task, pair.other],
                        "with_base": pair.with_base,
                        "files": pair.files,
                    }));
                    append(sql, task_id, round, commander, &event)?;
                }
            }
            Ok(())
        })
    }

    fn open_snapshots(
        &self,
        except_task: i64,
        base: &str,
    ) -> Result<Vec<OpenSnapshot>, StoreError> {
        self.again_if_cut(|sql| {
            sql.rows(
                "SELECT t.slug, r.worktree_changes, r.snapshot_after FROM tasks t \
                 JOIN rounds r ON r.id = \
                    (SELECT id FROM rounds WHERE task_id = t.id AND ended_at IS NOT NULL \
                     ORDER BY number DESC LIMIT 1) \
                 WHERE t.id != ?1 AND t.base = ?2 AND t.cleaned_at IS NULL \
                 AND t.parent IS NULL AND r.worktree_changes != '[]' \
                 AND r.snapshot_after IS NOT NULL \
                 AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.task_id = t.id \
                    AND j.kind = 'merged' AND j.at >= r.ended_at) \
                 ORDER BY t.slug",
                &bind![except_task, base],
                |row| {
                    Ok(OpenSnapshot {
                        slug: row.get(0)?,
                        changes: row.json(1, "worktree_changes")?,
                        snapshot: row.get(2)?,
                    })
                },
            )
        })
    }

    fn conflicts(&self) -> Result<Vec<PredictedConflict>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT task, other, with_base, detail FROM conflicts \
                 ORDER BY task, other, with_base",
                &[],
                conflict,
            )
        })
    }
}
