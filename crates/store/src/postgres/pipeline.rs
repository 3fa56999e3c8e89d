//! The PostgreSQL side of [`PipelineStore`]: role tasks (a task whose `parent` is the
//! pipeline's task) and the `pipelines` table.

use super::conn::Query;
use super::rows::{self, TASK_COLUMNS};
use super::{PgStore, insert_round, insert_task, load_round, load_task, to_json, write};
use crate::error::StoreError;
use crate::pipeline::{PipelineRecord, PipelineStore, RoleLink};
use crate::records::{NewRound, NewTask, Round, Task, now_ms};

impl PipelineStore for PgStore {
    fn create_bare_task(&mut self, task: &NewTask) -> Result<Task, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let id = insert_task(&mut tx, task)?;
        let stored = load_task(&mut tx, id)?;
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
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let id = insert_task(&mut tx, task)?;
        tx.execute(
            "UPDATE tasks SET parent = $2, role = $3 WHERE id = $1",
            &[&id, &parent, &role],
        )?;
        let round_id = insert_round(&mut tx, id, &task.slug, round)?;
        let stored = (load_task(&mut tx, id)?, load_round(&mut tx, round_id)?);
        tx.commit()?;
        Ok(stored)
    }

    fn role_tasks(&self, parent: i64) -> Result<Vec<Task>, StoreError> {
        let found = self.conn()?.query(
            &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE parent = $1 ORDER BY id"),
            &[&parent],
        )?;
        rows::all(found, rows::task)
    }

    fn role_links(&self) -> Result<Vec<RoleLink>, StoreError> {
        let found = self.conn()?.query(
            "SELECT c.slug, p.slug, c.role FROM tasks c JOIN tasks p ON p.id = c.parent \
             ORDER BY c.id",
            &[],
        )?;
        rows::all(found, |row| {
            Ok(RoleLink {
                slug: row.try_get(0)?,
                parent: row.try_get(1)?,
                role: row.try_get::<_, Option<String>>(2)?.unwrap_or_default(),
            })
        })
    }

    fn pipeline(&self, task_id: i64) -> Result<Option<PipelineRecord>, StoreError> {
        let found = self.conn()?.query_opt(
            "SELECT task_id, stage, reason, brief, plan_version, steps_total, steps_done, \
             review_round, verdicts, updated_at FROM pipelines WHERE task_id = $1",
            &[&task_id],
        )?;
        let Some(row) = found else {
            return Ok(None);
        };
        Ok(Some(PipelineRecord {
            task_id: row.try_get(0)?,
            stage: row.try_get(1)?,
            reason: row.try_get(2)?,
            brief: row.try_get(3)?,
            plan_version: rows::narrow(row.try_get(4)?, "plan_version")?,
            steps_total: rows::narrow(row.try_get(5)?, "steps_total")?,
            steps_done: rows::narrow(row.try_get(6)?, "steps_done")?,
            review_round: rows::narrow(row.try_get(7)?, "review_round")?,
            verdicts: rows::json(row.try_get(8)?, "verdicts")?,
            updated_at: row.try_get(9)?,
        }))
    }

    fn save_pipeline(&mut self, pipeline: &PipelineRecord) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO pipelines (task_id, stage, reason, brief, plan_version, steps_total, \
             steps_done, review_round, verdicts, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (task_id) DO UPDATE SET stage = $2, reason = $3, brief = $4, \
             plan_version = $5, steps_total = $6, steps_done = $7, review_round = $8, \
             verdicts = $9, updated_at = $10",
            &[
                &pipeline.task_id,
                &pipeline.stage,
                &pipeline.reason,
                &pipeline.brief,
                &i64::from(pipeline.plan_version),
                &i64::from(pipeline.steps_total),
                &i64::from(pipeline.steps_done),
                &i64::from(pipeline.review_round),
                &to_json(&pipeline.verdicts)?,
                &now_ms(),
            ],
        )?;
        Ok(())
    }
}
