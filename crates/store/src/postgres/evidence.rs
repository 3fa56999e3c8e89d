//! The PostgreSQL side of [`EvidenceStore`]: budgets, fleet links, labels, `DONE:` lines and
//! commanders' journal cursors. What was spent is summed from the rounds' stored summaries
//! (TEXT holding JSON, looked into as jsonb), as SQLite sums it with `json_extract`.

use super::conn::Query;
use super::rows::{self, JOURNAL_COLUMNS};
use super::{PgStore, big, write};
use crate::error::StoreError;
use crate::evidence::{Budget, EvidenceStore, LabelledTask, Spent};
use crate::records::{JournalEntry, now_ms};
use postgres::Row;
use std::collections::BTreeMap;

/// The figures of the rounds a `WHERE` clause picks, summed in SQL.
const SPENT: &str = "SELECT \
    COALESCE(SUM(COALESCE((summary::jsonb #>> '{tokens,input}')::bigint, 0) \
        + COALESCE((summary::jsonb #>> '{tokens,output}')::bigint, 0) \
        + COALESCE((summary::jsonb #>> '{tokens,reasoning}')::bigint, 0)), 0)::bigint, \
    COALESCE(SUM(COALESCE((summary::jsonb ->> 'cost_usd')::float8, 0.0)), 0.0)::float8 \
    FROM rounds WHERE ";

fn budget(row: &Row) -> Result<Budget, StoreError> {
    Ok(Budget {
        usd: row.try_get(0)?,
        tokens: row
            .try_get::<_, Option<i64>>(1)?
            .and_then(|v| u64::try_from(v).ok()),
    })
}

fn spent(row: &Row) -> Result<Spent, StoreError> {
    Ok(Spent {
        tokens: u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0),
        usd: row.try_get(1)?,
    })
}

/// Sets (replaces) a fleet's budget; also part of a fleet's submission.
pub(crate) fn save_fleet_budget(
    conn: &mut impl Query,
    fleet: &str,
    usd: Option<f64>,
    tokens: Option<u64>,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO budgets (fleet, usd, tokens) VALUES ($1, $2, $3) \
         ON CONFLICT (fleet) DO UPDATE SET usd = $2, tokens = $3",
        &[&fleet, &usd, &tokens.map(big)],
    )?;
    Ok(())
}

fn save_labels(
    conn: &mut impl Query,
    task_id: i64,
    labels: &[(String, String)],
) -> Result<(), StoreError> {
    for (key, value) in labels {
        conn.execute(
            "INSERT INTO labels (task_id, key, value) VALUES ($1, $2, $3) \
             ON CONFLICT (task_id, key) DO UPDATE SET value = $3",
            &[&task_id, key, value],
        )?;
    }
    Ok(())
}

/// A new task's labels, budget and fleet, inside the transaction that records it.
pub(crate) fn insert_task_extras(
    tx: &mut impl Query,
    task_id: i64,
    task: &crate::NewTask,
) -> Result<(), StoreError> {
    save_labels(tx, task_id, &task.labels)?;
    if task.budget.is_set() {
        tx.execute(
            "INSERT INTO task_budgets (task_id, usd, tokens) VALUES ($1, $2, $3)",
            &[&task_id, &task.budget.usd, &task.budget.tokens.map(big)],
        )?;
    }
    if let Some(fleet) = &task.fleet {
        tx.execute(
            "INSERT INTO fleet_tasks (task_id, fleet) VALUES ($1, $2)",
            &[&task_id, fleet],
        )?;
    }
    Ok(())
}

impl EvidenceStore for PgStore {
    fn set_task_budget(&mut self, task_id: i64, budget: &Budget) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO task_budgets (task_id, usd, tokens) VALUES ($1, $2, $3) \
             ON CONFLICT (task_id) DO UPDATE SET usd = $2, tokens = $3",
            &[&task_id, &budget.usd, &budget.tokens.map(big)],
        )?;
        Ok(())
    }

    fn task_budget(&self, task_id: i64) -> Result<Budget, StoreError> {
        let found = self.conn()?.query_opt(
            "SELECT usd, tokens FROM task_budgets WHERE task_id = $1",
            &[&task_id],
        )?;
        Ok(found.as_ref().map(budget).transpose()?.unwrap_or_default())
    }

    fn set_fleet_budget(
        &mut self,
        fleet: &str,
        usd: Option<f64>,
        tokens: Option<u64>,
    ) -> Result<(), StoreError> {
        save_fleet_budget(&mut *self.conn()?, fleet, usd, tokens)
    }

    fn fleet_budget(&self, fleet: &str) -> Result<Budget, StoreError> {
        let found = self.conn()?.query_opt(
            "SELECT usd, tokens FROM budgets WHERE fleet = $1",
            &[&fleet],
        )?;
        Ok(found.as_ref().map(budget).transpose()?.unwrap_or_default())
    }

    fn set_task_fleet(&mut self, task_id: i64, fleet: Option<&str>) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        match fleet {
            Some(fleet) => conn.execute(
                "INSERT INTO fleet_tasks (task_id, fleet) VALUES ($1, $2) \
                 ON CONFLICT (task_id) DO UPDATE SET fleet = $2",
                &[&task_id, &fleet],
            )?,
            None => conn.execute("DELETE FROM fleet_tasks WHERE task_id = $1", &[&task_id])?,
        };
        Ok(())
    }

    fn task_fleet(&self, task_id: i64) -> Result<Option<String>, StoreError> {
        let found = self.conn()?.query_opt(
            "SELECT fleet FROM fleet_tasks WHERE task_id = $1",
            &[&task_id],
        )?;
        Ok(found.map(|row| row.try_get(0)).transpose()?)
    }

    fn task_spent(&self, task_id: i64, except: Option<i64>) -> Result<Spent, StoreError> {
        let row = self.conn()?.query_one(
            &format!("{SPENT} task_id = $1 AND id != $2"),
            &[&task_id, &except.unwrap_or(-1)],
        )?;
        spent(&row)
    }

    fn fleet_spent(&self, fleet: &str, except: Option<i64>) -> Result<Spent, StoreError> {
        let row = self.conn()?.query_one(
            &format!(
                "{SPENT} task_id IN (SELECT task_id FROM fleet_tasks WHERE fleet = $1) AND id != $2"
            ),
            &[&fleet, &except.unwrap_or(-1)],
        )?;
        spent(&row)
    }

    fn set_labels(&mut self, task_id: i64, labels: &[(String, String)]) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        save_labels(&mut tx, task_id, labels)?;
        tx.commit()?;
        Ok(())
    }

    fn labels(&self, task_id: i64) -> Result<BTreeMap<String, String>, StoreError> {
        let found = self.conn()?.query(
            "SELECT key, value FROM labels WHERE task_id = $1 ORDER BY key",
            &[&task_id],
        )?;
        Ok(
            rows::all(found, |row| Ok((row.try_get(0)?, row.try_get(1)?)))?
                .into_iter()
                .collect(),
        )
    }

    fn labelled_tasks(&self, key: &str) -> Result<Vec<LabelledTask>, StoreError> {
        let found = self.conn()?.query(
            "SELECT t.slug, l.value, t.last_status, d.line, d.at FROM tasks t \
             LEFT JOIN labels l ON l.task_id = t.id AND l.key = $1 \
             LEFT JOIN done_lines d ON d.task_id = t.id \
             WHERE t.parent IS NULL ORDER BY t.slug",
            &[&key],
        )?;
        rows::all(found, |row| {
            Ok(LabelledTask {
                slug: row.try_get(0)?,
                value: row.try_get(1)?,
                last_status: row.try_get(2)?,
                done: row.try_get(3)?,
                done_at: row.try_get(4)?,
            })
        })
    }

    fn record_done(&mut self, task_id: i64, round: u32, line: &str) -> Result<(), StoreError> {
        let at = now_ms();
        self.pool.write_twice_if_cut(|conn, _| {
            conn.execute(
                "INSERT INTO done_lines (task_id, round, line, at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (task_id) DO UPDATE SET round = $2, line = $3, at = $4",
                &[&task_id, &i64::from(round), &line, &at],
            )
        })?;
        Ok(())
    }

    fn done_lines(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let found = self.conn()?.query(
            "SELECT t.slug, d.line FROM done_lines d JOIN tasks t ON t.id = d.task_id",
            &[],
        )?;
        Ok(
            rows::all(found, |row| Ok((row.try_get(0)?, row.try_get(1)?)))?
                .into_iter()
                .collect(),
        )
    }

    fn open_work(&self, except_task: i64) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let found = self.twice(|conn| {
            Ok(conn.query(
                "SELECT t.slug, r.worktree_changes FROM tasks t JOIN rounds r ON r.id = \
                (SELECT id FROM rounds WHERE task_id = t.id AND ended_at IS NOT NULL \
                 ORDER BY number DESC LIMIT 1) \
             WHERE t.id != $1 AND t.cleaned_at IS NULL AND t.parent IS NULL \
             AND r.worktree_changes != '[]' \
             AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.task_id = t.id \
                AND j.kind = 'merged' AND j.at >= r.ended_at) \
             ORDER BY t.slug",
                &[&except_task],
            )?)
        })?;
        rows::all(found, |row| {
            Ok((
                row.try_get(0)?,
                rows::json(row.try_get(1)?, "worktree_changes")?,
            ))
        })
    }

    fn add_journal(
        &mut self,
        task_id: i64,
        round: Option<u32>,
        kind: &str,
        commander: Option<&str>,
        detail: serde_json::Value,
    ) -> Result<i64, StoreError> {
        // Sent again when the connection was gone before the entry was written: an entry
        // whose answer alone was lost may then be written twice, which a reader of the
        // journal can bear better than an entry never written.
        self.twice(|conn| super::journal(conn, task_id, round, kind, commander, detail.clone()))
    }

    fn journal_cursor(&self, commander: &str) -> Result<i64, StoreError> {
        let found = self.conn()?.query_opt(
            "SELECT journal_cursor FROM commanders WHERE name = $1",
            &[&commander],
        )?;
        Ok(found.map(|row| row.try_get(0)).transpose()?.unwrap_or(0))
    }

    fn ack_journal(&mut self, commander: &str, cursor: i64) -> Result<i64, StoreError> {
        let row = self.conn()?.query_one(
            "INSERT INTO commanders (name, journal_cursor) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE \
             SET journal_cursor = GREATEST(commanders.journal_cursor, $2) \
             RETURNING journal_cursor",
            &[&commander, &cursor],
        )?;
        Ok(row.try_get(0)?)
    }

    fn last_journal_id(&self) -> Result<i64, StoreError> {
        let row = self
            .conn()?
            .query_one("SELECT COALESCE(MAX(id), 0)::bigint FROM journal", &[])?;
        Ok(row.try_get(0)?)
    }

    fn commander_journal(
        &self,
        commander: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        let found = self.conn()?.query(
            &format!(
                "SELECT {JOURNAL_COLUMNS} FROM journal j LEFT JOIN tasks t ON t.id = j.task_id \
                 WHERE j.id > $1 AND j.kind != 'round-started' AND (t.owner = $2 \
                    OR j.commander = $2 \
                    OR (j.kind IN ('transferred', 'assigned', 'released') \
                        AND (j.detail::jsonb ->> 'from' = $2 \
                        OR j.detail::jsonb ->> 'to' = $2))) \
                 ORDER BY j.id LIMIT $3"
            ),
            &[&after, &commander, &i64::from(limit)],
        )?;
        rows::all(found, rows::journal_entry)
    }
}
