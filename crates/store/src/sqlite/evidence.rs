//! The SQLite side of [`EvidenceStore`] (migration 0010): budgets, fleet links, labels,
//! `DONE:` lines and commanders' journal cursors. What was spent is summed from the rounds'
//! stored summaries (a running round's host stores its figures settled: its own tokens and
//! a priced cost), so no second copy of the figures can drift from the first.

use super::SqliteStore;
use crate::error::StoreError;
use crate::evidence::{Budget, EvidenceStore, LabelledTask, Spent};
use crate::records::{JournalEntry, now_ms};
use rusqlite::{OptionalExtension, params};
use std::collections::BTreeMap;

/// The figures of the rounds a `WHERE` clause picks, summed in SQL.
const SPENT: &str = "SELECT \
    COALESCE(SUM(COALESCE(json_extract(summary, '$.tokens.input'), 0) \
        + COALESCE(json_extract(summary, '$.tokens.output'), 0) \
        + COALESCE(json_extract(summary, '$.tokens.reasoning'), 0)), 0), \
    COALESCE(SUM(COALESCE(json_extract(summary, '$.cost_usd'), 0.0)), 0.0) \
    FROM rounds WHERE ";

fn tokens_in(value: Option<i64>) -> Option<u64> {
    value.and_then(|v| u64::try_from(v).ok())
}

fn tokens_out(value: Option<u64>) -> Option<i64> {
    value.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

/// Sets (replaces) a fleet's budget; also part of a fleet's submission.
pub(super) fn save_fleet_budget(
    conn: &rusqlite::Connection,
    fleet: &str,
    usd: Option<f64>,
    tokens: Option<u64>,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO budgets (fleet, usd, tokens) VALUES (?1, ?2, ?3) \
         ON CONFLICT(fleet) DO UPDATE SET usd = ?2, tokens = ?3",
        params![fleet, usd, tokens_out(tokens)],
    )?;
    Ok(())
}

fn spent(row: &rusqlite::Row<'_>) -> rusqlite::Result<Spent> {
    Ok(Spent {
        tokens: u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0),
        usd: row.get(1)?,
    })
}

/// A new task's labels, budget and fleet, inside the transaction that records it.
pub(super) fn insert_task_extras(
    tx: &rusqlite::Transaction<'_>,
    task_id: i64,
    task: &crate::NewTask,
) -> Result<(), StoreError> {
    for (key, value) in &task.labels {
        tx.execute(
            "INSERT INTO labels (task_id, key, value) VALUES (?1, ?2, ?3) \
             ON CONFLICT(task_id, key) DO UPDATE SET value = ?3",
            params![task_id, key, value],
        )?;
    }
    if task.budget.is_set() {
        tx.execute(
            "INSERT INTO task_budgets (task_id, usd, tokens) VALUES (?1, ?2, ?3)",
            params![task_id, task.budget.usd, tokens_out(task.budget.tokens)],
        )?;
    }
    if let Some(fleet) = &task.fleet {
        tx.execute(
            "INSERT INTO fleet_tasks (task_id, fleet) VALUES (?1, ?2)",
            params![task_id, fleet],
        )?;
    }
    Ok(())
}

impl EvidenceStore for SqliteStore {
    fn set_task_budget(&mut self, task_id: i64, budget: &Budget) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO task_budgets (task_id, usd, tokens) VALUES (?1, ?2, ?3) \
             ON CONFLICT(task_id) DO UPDATE SET usd = ?2, tokens = ?3",
            params![task_id, budget.usd, tokens_out(budget.tokens)],
        )?;
        Ok(())
    }

    fn task_budget(&self, task_id: i64) -> Result<Budget, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT usd, tokens FROM task_budgets WHERE task_id = ?1",
                [task_id],
                |row| {
                    Ok(Budget {
                        usd: row.get(0)?,
                        tokens: tokens_in(row.get(1)?),
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }

    fn set_fleet_budget(
        &mut self,
        fleet: &str,
        usd: Option<f64>,
        tokens: Option<u64>,
    ) -> Result<(), StoreError> {
        save_fleet_budget(&self.conn, fleet, usd, tokens)
    }

    fn fleet_budget(&self, fleet: &str) -> Result<Budget, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT usd, tokens FROM budgets WHERE fleet = ?1",
                [fleet],
                |row| {
                    Ok(Budget {
                        usd: row.get(0)?,
                        tokens: tokens_in(row.get(1)?),
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }

    fn set_task_fleet(&mut self, task_id: i64, fleet: Option<&str>) -> Result<(), StoreError> {
        match fleet {
            Some(fleet) => self.conn.execute(
                "INSERT INTO fleet_tasks (task_id, fleet) VALUES (?1, ?2) \
                 ON CONFLICT(task_id) DO UPDATE SET fleet = ?2",
                params![task_id, fleet],
            )?,
            None => self
                .conn
                .execute("DELETE FROM fleet_tasks WHERE task_id = ?1", [task_id])?,
        };
        Ok(())
    }

    fn task_fleet(&self, task_id: i64) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT fleet FROM fleet_tasks WHERE task_id = ?1",
                [task_id],
                |row| row.get(0),
            )
            .optional()?)
    }

    fn task_spent(&self, task_id: i64, except: Option<i64>) -> Result<Spent, StoreError> {
        Ok(self.conn.query_row(
            &format!("{SPENT} task_id = ?1 AND id != ?2"),
            params![task_id, except.unwrap_or(-1)],
            spent,
        )?)
    }

    fn fleet_spent(&self, fleet: &str, except: Option<i64>) -> Result<Spent, StoreError> {
        Ok(self.conn.query_row(
            &format!(
                "{SPENT} task_id IN (SELECT task_id FROM fleet_tasks WHERE fleet = ?1) AND id != ?2"
            ),
            params![fleet, except.unwrap_or(-1)],
            spent,
        )?)
    }

    fn set_labels(&mut self, task_id: i64, labels: &[(String, String)]) -> Result<(), StoreError> {
        let tx = self.write()?;
        for (key, value) in labels {
            tx.execute(
                "INSERT INTO labels (task_id, key, value) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(task_id, key) DO UPDATE SET value = ?3",
                params![task_id, key, value],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn labels(&self, task_id: i64) -> Result<BTreeMap<String, String>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT key, value FROM labels WHERE task_id = ?1 ORDER BY key")?;
        let labels = statement
            .query_map([task_id], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        Ok(labels)
    }

    fn labelled_tasks(&self, key: &str) -> Result<Vec<LabelledTask>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT t.slug, l.value, t.last_status, d.line, d.at FROM tasks t \
             LEFT JOIN labels l ON l.task_id = t.id AND l.key = ?1 \
             LEFT JOIN done_lines d ON d.task_id = t.id \
             WHERE t.parent IS NULL ORDER BY t.slug",
        )?;
        let tasks = statement
            .query_map([key], |row| {
                Ok(LabelledTask {
                    slug: row.get(0)?,
                    value: row.get(1)?,
                    last_status: row.get(2)?,
                    done: row.get(3)?,
                    done_at: row.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(tasks)
    }

    fn record_done(&mut self, task_id: i64, round: u32, line: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO done_lines (task_id, round, line, at) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(task_id) DO UPDATE SET round = ?2, line = ?3, at = ?4",
            params![task_id, round, line, now_ms()],
        )?;
        Ok(())
    }

    fn done_lines(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let mut statement = self
            .conn
            .prepare("SELECT t.slug, d.line FROM done_lines d JOIN tasks t ON t.id = d.task_id")?;
        let lines = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<BTreeMap<_, _>, _>>()?;
        Ok(lines)
    }

    fn open_work(&self, except_task: i64) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT t.slug, r.worktree_changes FROM tasks t JOIN rounds r ON r.id = \
                (SELECT id FROM rounds WHERE task_id = t.id AND ended_at IS NOT NULL \
                 ORDER BY number DESC LIMIT 1) \
             WHERE t.id != ?1 AND t.cleaned_at IS NULL AND t.parent IS NULL \
             AND r.worktree_changes != '[]' \
             AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.task_id = t.id \
                AND j.kind = 'merged' AND j.at >= r.ended_at) \
             ORDER BY t.slug",
        )?;
        let rows = statement
            .query_map([except_task], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(slug, changes)| {
                let changes = serde_json::from_str(&changes)
                    .map_err(|e| StoreError::Corrupt(format!("column worktree_changes: {e}")))?;
                Ok((slug, changes))
            })
            .collect()
    }

    fn add_journal(
        &mut self,
        task_id: i64,
        round: Option<u32>,
        kind: &str,
        commander: Option<&str>,
        detail: serde_json::Value,
    ) -> Result<i64, StoreError> {
        self.conn.execute(
            "INSERT INTO journal (at, task_id, round, kind, commander, detail) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                now_ms(),
                task_id,
                round,
                kind,
                commander,
                detail.to_string()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn journal_cursor(&self, commander: &str) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT journal_cursor FROM commanders WHERE name = ?1",
                [commander],
                |row| row.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    fn ack_journal(&mut self, commander: &str, cursor: i64) -> Result<i64, StoreError> {
        let tx = self.write()?;
        tx.execute(
            "INSERT INTO commanders (name, journal_cursor) VALUES (?1, ?2) \
             ON CONFLICT(name) DO UPDATE SET journal_cursor = MAX(journal_cursor, ?2)",
            params![commander, cursor],
        )?;
        let now = tx.query_row(
            "SELECT journal_cursor FROM commanders WHERE name = ?1",
            [commander],
            |row| row.get(0),
        )?;
        tx.commit()?;
        Ok(now)
    }

    fn last_journal_id(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT COALESCE(MAX(id), 0) FROM journal", [], |row| {
                row.get(0)
            })?)
    }

    fn commander_journal(
        &self,
        commander: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT j.id, j.at, t.slug, j.round, j.kind, j.commander, j.detail \
             FROM journal j LEFT JOIN tasks t ON t.id = j.task_id \
             WHERE j.id > ?1 AND j.kind != 'round-started' AND (t.owner = ?2 \
                OR j.commander = ?2 \
                OR (j.kind IN ('transferred', 'assigned', 'released') \
                    AND (json_extract(j.detail, '$.from') = ?2 \
                    OR json_extract(j.detail, '$.to') = ?2))) \
             ORDER BY j.id LIMIT ?3",
        )?;
        let entries = statement
            .query_map(params![after, commander, limit], super::rows::journal_entry)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(entries)
    }
}
