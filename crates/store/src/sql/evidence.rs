//! [`EvidenceStore`] for both backends: budgets, fleet links, labels, `DONE:` lines and
//! commanders' journal cursors. What was spent is summed from the rounds' stored summaries
//! (a running round's host stores its figures settled: its own tokens and a priced cost), so
//! no second copy of the figures can drift from the first.

use super::row::Row;
use super::{Database, Dialect, Sql, bind, journal};
use crate::error::StoreError;
use crate::evidence::{Budget, EvidenceStore, LabelledTask, Spent};
use crate::journal::{JournalEntry, JournalEvent};
use crate::records::{NewTask, now_ms};
use std::collections::BTreeMap;

/// The figures of the rounds a `WHERE` clause picks, summed in SQL.
fn spent_of(dialect: Dialect, rounds: &str) -> String {
    let tokens = |kind| {
        let field = dialect.json_field("summary", &["tokens", kind]);
        format!("COALESCE(CAST({field} AS BIGINT), 0)")
    };
    let cost = dialect.json_field("summary", &["cost_usd"]);
    format!(
        "SELECT CAST(COALESCE(SUM({} + {} + {}), 0) AS BIGINT), \
         CAST(COALESCE(SUM(COALESCE(CAST({cost} AS DOUBLE PRECISION), 0.0)), 0.0) \
         AS DOUBLE PRECISION) FROM rounds WHERE {rounds}",
        tokens("input"),
        tokens("output"),
        tokens("reasoning"),
    )
}

fn spent(row: &dyn Row) -> Result<Spent, StoreError> {
    Ok(Spent {
        tokens: u64::try_from(row.get::<i64>(0)?).unwrap_or(0),
        usd: row.get(1)?,
    })
}

fn budget(row: &dyn Row) -> Result<Budget, StoreError> {
    Ok(Budget {
        usd: row.get(0)?,
        tokens: row
            .get::<Option<i64>>(1)?
            .and_then(|v| u64::try_from(v).ok()),
    })
}

/// Sets (replaces) a fleet's budget; also part of a fleet's submission.
pub(crate) fn save_fleet_budget(
    sql: &mut dyn Sql,
    fleet: &str,
    usd: Option<f64>,
    tokens: Option<u64>,
) -> Result<(), StoreError> {
    sql.execute(
        "INSERT INTO budgets (fleet, usd, tokens) VALUES (?1, ?2, ?3) \
         ON CONFLICT (fleet) DO UPDATE SET usd = ?2, tokens = ?3",
        &bind![fleet, usd, tokens],
    )?;
    Ok(())
}

fn save_labels(
    sql: &mut dyn Sql,
    task_id: i64,
    labels: &[(String, String)],
) -> Result<(), StoreError> {
    for (key, value) in labels {
        sql.execute(
            "INSERT INTO labels (task_id, key, value) VALUES (?1, ?2, ?3) \
             ON CONFLICT (task_id, key) DO UPDATE SET value = ?3",
            &bind![task_id, key, value],
        )?;
    }
    Ok(())
}

/// A new task's labels, budget and fleet, inside the transaction that records it.
pub(crate) fn insert_task_extras(
    sql: &mut dyn Sql,
    task_id: i64,
    task: &NewTask,
) -> Result<(), StoreError> {
    save_labels(sql, task_id, &task.labels)?;
    if task.budget.is_set() {
        sql.execute(
            "INSERT INTO task_budgets (task_id, usd, tokens) VALUES (?1, ?2, ?3)",
            &bind![task_id, task.budget.usd, task.budget.tokens],
        )?;
    }
    if let Some(fleet) = &task.fleet {
        sql.execute(
            "INSERT INTO fleet_tasks (task_id, fleet) VALUES (?1, ?2)",
            &bind![task_id, fleet],
        )?;
    }
    Ok(())
}

/// A pair of text columns.
fn pair(row: &dyn Row) -> Result<(String, String), StoreError> {
    Ok((row.get(0)?, row.get(1)?))
}

impl<D: Database> EvidenceStore for D {
    fn set_task_budget(&mut self, task_id: i64, budget: &Budget) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "INSERT INTO task_budgets (task_id, usd, tokens) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (task_id) DO UPDATE SET usd = ?2, tokens = ?3",
                &bind![task_id, budget.usd, budget.tokens],
            )
        })?;
        Ok(())
    }

    fn task_budget(&self, task_id: i64) -> Result<Budget, StoreError> {
        let found = self.on_conn(|sql| {
            sql.first(
                "SELECT usd, tokens FROM task_budgets WHERE task_id = ?1",
                &bind![task_id],
                budget,
            )
        })?;
        Ok(found.unwrap_or_default())
    }

    fn set_fleet_budget(
        &mut self,
        fleet: &str,
        usd: Option<f64>,
        tokens: Option<u64>,
    ) -> Result<(), StoreError> {
        self.on_conn(|sql| save_fleet_budget(sql, fleet, usd, tokens))
    }

    fn fleet_budget(&self, fleet: &str) -> Result<Budget, StoreError> {
        let found = self.on_conn(|sql| {
            sql.first(
                "SELECT usd, tokens FROM budgets WHERE fleet = ?1",
                &bind![fleet],
                budget,
            )
        })?;
        Ok(found.unwrap_or_default())
    }

    fn set_task_fleet(&mut self, task_id: i64, fleet: Option<&str>) -> Result<(), StoreError> {
        self.on_conn(|sql| match fleet {
            Some(fleet) => sql.execute(
                "INSERT INTO fleet_tasks (task_id, fleet) VALUES (?1, ?2) \
                 ON CONFLICT (task_id) DO UPDATE SET fleet = ?2",
                &bind![task_id, fleet],
            ),
            None => sql.execute(
                "DELETE FROM fleet_tasks WHERE task_id = ?1",
                &bind![task_id],
            ),
        })?;
        Ok(())
    }

    fn task_fleet(&self, task_id: i64) -> Result<Option<String>, StoreError> {
        self.on_conn(|sql| {
            sql.first(
                "SELECT fleet FROM fleet_tasks WHERE task_id = ?1",
                &bind![task_id],
                |row| row.get(0),
            )
        })
    }

    fn task_spent(&self, task_id: i64, except: Option<i64>) -> Result<Spent, StoreError> {
        self.on_conn(|sql| {
            let statement = spent_of(sql.dialect(), "task_id = ?1 AND id != ?2");
            sql.one(&statement, &bind![task_id, except.unwrap_or(-1)], spent)
        })
    }

    fn fleet_spent(&self, fleet: &str, except: Option<i64>) -> Result<Spent, StoreError> {
        self.on_conn(|sql| {
            let statement = spent_of(
                sql.dialect(),
                "task_id IN (SELECT task_id FROM fleet_tasks WHERE fleet = ?1) AND id != ?2",
            );
            sql.one(&statement, &bind![fleet, except.unwrap_or(-1)], spent)
        })
    }

    fn race_spent(&self, race: &str, except: Option<i64>) -> Result<Spent, StoreError> {
        // A slug is lower-case letters, digits and dashes: nothing LIKE reads as a pattern.
        let tasks = format!("{race}.%");
        self.on_conn(|sql| {
            let statement = spent_of(
                sql.dialect(),
                "task_id IN (SELECT id FROM tasks WHERE slug LIKE ?1) AND id != ?2",
            );
            sql.one(&statement, &bind![tasks, except.unwrap_or(-1)], spent)
        })
    }

    fn set_labels(&mut self, task_id: i64, labels: &[(String, String)]) -> Result<(), StoreError> {
        self.write(|sql| save_labels(sql, task_id, labels))
    }

    fn labels(&self, task_id: i64) -> Result<BTreeMap<String, String>, StoreError> {
        let labels = self.on_conn(|sql| {
            sql.rows(
                "SELECT key, value FROM labels WHERE task_id = ?1 ORDER BY key",
                &bind![task_id],
                pair,
            )
        })?;
        Ok(labels.into_iter().collect())
    }

    fn labelled_tasks(&self, key: &str) -> Result<Vec<LabelledTask>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT t.slug, l.value, t.last_status, d.line, d.at FROM tasks t \
                 LEFT JOIN labels l ON l.task_id = t.id AND l.key = ?1 \
                 LEFT JOIN done_lines d ON d.task_id = t.id \
                 WHERE t.parent IS NULL ORDER BY t.slug",
                &bind![key],
                |row| {
                    Ok(LabelledTask {
                        slug: row.get(0)?,
                        value: row.get(1)?,
                        last_status: row.get(2)?,
                        done: row.get(3)?,
                        done_at: row.get(4)?,
                    })
                },
            )
        })
    }

    fn record_done(&mut self, task_id: i64, round: u32, line: &str) -> Result<(), StoreError> {
        let at = now_ms();
        self.again_if_cut(|sql| {
            sql.execute(
                "INSERT INTO done_lines (task_id, round, line, at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (task_id) DO UPDATE SET round = ?2, line = ?3, at = ?4",
                &bind![task_id, round, line, at],
            )
        })?;
        Ok(())
    }

    fn done_lines(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let lines = self.on_conn(|sql| {
            sql.rows(
                "SELECT t.slug, d.line FROM done_lines d JOIN tasks t ON t.id = d.task_id",
                &[],
                pair,
            )
        })?;
        Ok(lines.into_iter().collect())
    }

    fn open_work(&self, except_task: i64) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        self.again_if_cut(|sql| {
            sql.rows(
                "SELECT t.slug, r.worktree_changes FROM tasks t JOIN rounds r ON r.id = \
                    (SELECT id FROM rounds WHERE task_id = t.id AND ended_at IS NOT NULL \
                     ORDER BY number DESC LIMIT 1) \
                 WHERE t.id != ?1 AND t.cleaned_at IS NULL AND t.parent IS NULL \
                 AND r.worktree_changes != '[]' \
                 AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.task_id = t.id \
                    AND j.kind = 'merged' AND j.at >= r.ended_at) \
                 ORDER BY t.slug",
                &bind![except_task],
                |row| Ok((row.get(0)?, row.json(1, "worktree_changes")?)),
            )
        })
    }

    fn add_journal(
        &mut self,
        task_id: i64,
        round: Option<u32>,
        commander: Option<&str>,
        event: &JournalEvent,
    ) -> Result<i64, StoreError> {
        // Sent again when the connection was gone before the entry was written: an entry
        // whose answer alone was lost may then be written twice, which a reader of the
        // journal can bear better than an entry never written.
        self.again_if_cut(|sql| journal::append(sql, task_id, round, commander, event))
    }

    fn journal_cursor(&self, commander: &str) -> Result<i64, StoreError> {
        let found = self.on_conn(|sql| {
            sql.first(
                "SELECT journal_cursor FROM commanders WHERE name = ?1",
                &bind![commander],
                |row| row.get(0),
            )
        })?;
        Ok(found.unwrap_or(0))
    }

    fn ack_journal(&mut self, commander: &str, cursor: i64) -> Result<i64, StoreError> {
        self.on_conn(|sql| {
            sql.value(
                "INSERT INTO commanders (name, journal_cursor) VALUES (?1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET journal_cursor = \
                    CASE WHEN commanders.journal_cursor > ?2 THEN commanders.journal_cursor \
                    ELSE ?2 END \
                 RETURNING journal_cursor",
                &bind![commander, cursor],
            )
        })
    }

    fn last_journal_id(&self) -> Result<i64, StoreError> {
        self.on_conn(journal::last_id)
    }

    fn commander_journal(
        &self,
        commander: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        self.on_conn(|sql| journal::commanders(sql, commander, after, limit))
    }
}
