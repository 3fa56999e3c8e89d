//! The SQLite side of [`PipelineStore`]: role tasks (a task whose `parent` is the pipeline's
//! task) and the `pipelines` table (migration 0007).

use super::rows::{self, TASK_COLUMNS};
use super::{SqliteStore, insert_round, insert_task, load_round, load_task, to_json};
use crate::error::StoreError;
use crate::pipeline::{PipelineRecord, PipelineStore, RoleLink};
use crate::records::{NewRound, NewTask, Round, Task, now_ms};
use rusqlite::{OptionalExtension, params};

impl PipelineStore for SqliteStore {
    fn create_bare_task(&mut self, task: &NewTask) -> Result<Task, StoreError> {
        let tx = self.write()?;
        let id = insert_task(&tx, task)?;
        let stored = load_task(&tx, id)?;
        tx.commit()?;
        Ok(stored)
    }

    fn create_role_task(
        &mut self,
        parent: i64,
        role: &str,
        task: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError> {
        let tx = self.write()?;
        let id = insert_task(&tx, task)?;
        tx.execute(
            "UPDATE tasks SET parent = ?2, role = ?3 WHERE id = ?1",
            params![id, parent, role],
        )?;
        let round_id = insert_round(&tx, id, &task.slug, round)?;
        let stored = (load_task(&tx, id)?, load_round(&tx, round_id)?);
        tx.commit()?;
        Ok(stored)
    }

    fn role_tasks(&self, parent: i64) -> Result<Vec<Task>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {TASK_COLUMNS} FROM tasks WHERE parent = ?1 ORDER BY id"
        ))?;
        let tasks = statement
            .query_map([parent], rows::task)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(tasks)
    }

    fn role_links(&self) -> Result<Vec<RoleLink>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT c.slug, p.slug, c.role FROM tasks c JOIN tasks p ON p.id = c.parent \
             ORDER BY c.id",
        )?;
        let links = statement
            .query_map([], |row| {
                Ok(RoleLink {
                    slug: row.get(0)?,
                    parent: row.get(1)?,
                    role: row.get::<_, Option<String>>(2)?.unwrap_or_default(),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(links)
    }

    fn pipeline(&self, task_id: i64) -> Result<Option<PipelineRecord>, StoreError> {
        let found = self
            .conn
            .query_row(
                "SELECT task_id, stage, reason, brief, plan_version, steps_total, steps_done, \
                 review_round, verdicts, updated_at FROM pipelines WHERE task_id = ?1",
                [task_id],
                |row| {
                    let verdicts: String = row.get(8)?;
                    Ok((
                        PipelineRecord {
                            task_id: row.get(0)?,
                            stage: row.get(1)?,
                            reason: row.get(2)?,
                            brief: row.get(3)?,
                            plan_version: row.get(4)?,
                            steps_total: row.get(5)?,
                            steps_done: row.get(6)?,
                            review_round: row.get(7)?,
                            verdicts: Vec::new(),
                            updated_at: row.get(9)?,
                        },
                        verdicts,
                    ))
                },
            )
            .optional()?;
        let Some((mut record, verdicts)) = found else {
            return Ok(None);
        };
        record.verdicts = serde_json::from_str(&verdicts)
            .map_err(|e| StoreError::Corrupt(format!("column verdicts: {e}")))?;
        Ok(Some(record))
    }

    fn save_pipeline(&mut self, pipeline: &PipelineRecord) -> Result<(), StoreError> {
        let tx = self.write()?;
        tx.execute(
            "INSERT INTO pipelines (task_id, stage, reason, brief, plan_version, steps_total, \
             steps_done, review_round, verdicts, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
             ON CONFLICT(task_id) DO UPDATE SET stage = ?2, reason = ?3, brief = ?4, \
             plan_version = ?5, steps_total = ?6, steps_done = ?7, review_round = ?8, \
             verdicts = ?9, updated_at = ?10",
            params![
                pipeline.task_id,
                pipeline.stage,
                pipeline.reason,
                pipeline.brief,
                pipeline.plan_version,
                pipeline.steps_total,
                pipeline.steps_done,
                pipeline.review_round,
                to_json(&pipeline.verdicts)?,
                now_ms(),
            ],
        )?;
        tx.commit()?;
        Ok(())
    }
}
