//! [`PipelineStore`] for both backends: role tasks (a task whose `parent` is the pipeline's
//! task) and the `pipelines` table.

use super::rounds::{insert_round, load_round};
use super::tasks::{TASK_COLUMNS, insert_task, load_task, task};
use super::{Database, Param, bind};
use crate::error::StoreError;
use crate::pipeline::{PipelineRecord, PipelineStore, RoleLink};
use crate::records::{NewRound, NewTask, Round, Task, now_ms};

impl<D: Database> PipelineStore for D {
    fn create_bare_task(&mut self, new: &NewTask) -> Result<Task, StoreError> {
        self.write(|sql| {
            let id = insert_task(sql, new)?;
            load_task(sql, id)
        })
    }

    fn create_role_task(
        &mut self,
        parent: i64,
        role: &str,
        new: &NewTask,
        round: &NewRound,
    ) -> Result<(Task, Round), StoreError> {
        self.write(|sql| {
            let id = insert_task(sql, new)?;
            sql.execute(
                "UPDATE tasks SET parent = ?2, role = ?3 WHERE id = ?1",
                &bind![id, parent, role],
            )?;
            let round_id = insert_round(sql, id, &new.slug, round)?;
            Ok((load_task(sql, id)?, load_round(sql, round_id)?))
        })
    }

    fn role_tasks(&self, parent: i64) -> Result<Vec<Task>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE parent = ?1 ORDER BY id"),
                &bind![parent],
                task,
            )
        })
    }

    fn role_links(&self) -> Result<Vec<RoleLink>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                "SELECT c.slug, p.slug, c.role FROM tasks c JOIN tasks p ON p.id = c.parent \
                 ORDER BY c.id",
                &[],
                |row| {
                    Ok(RoleLink {
                        slug: row.get(0)?,
                        parent: row.get(1)?,
                        role: row.get::<Option<String>>(2)?.unwrap_or_default(),
                    })
                },
            )
        })
    }

    fn pipeline(&self, task_id: i64) -> Result<Option<PipelineRecord>, StoreError> {
        self.on_conn(|sql| {
            sql.first(
                "SELECT task_id, stage, reason, brief, plan_version, steps_total, steps_done, \
                 review_round, verdicts, updated_at FROM pipelines WHERE task_id = ?1",
                &bind![task_id],
                |row| {
                    Ok(PipelineRecord {
                        task_id: row.get(0)?,
                        stage: row.get(1)?,
                        reason: row.get(2)?,
                        brief: row.get(3)?,
                        plan_version: row.get(4)?,
                        steps_total: row.get(5)?,
                        steps_done: row.get(6)?,
                        review_round: row.get(7)?,
                        verdicts: row.json(8, "verdicts")?,
                        updated_at: row.get(9)?,
                    })
                },
            )
        })
    }

    fn save_pipeline(&mut self, pipeline: &PipelineRecord) -> Result<(), StoreError> {
        self.on_conn(|sql| {
            sql.execute(
                "INSERT INTO pipelines (task_id, stage, reason, brief, plan_version, \
                 steps_total, steps_done, review_round, verdicts, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
                 ON CONFLICT (task_id) DO UPDATE SET stage = ?2, reason = ?3, brief = ?4, \
                 plan_version = ?5, steps_total = ?6, steps_done = ?7, review_round = ?8, \
                 verdicts = ?9, updated_at = ?10",
                &[
                    Param::from(pipeline.task_id),
                    Param::from(&pipeline.stage),
                    Param::from(pipeline.reason.as_deref()),
                    Param::from(&pipeline.brief),
                    Param::from(pipeline.plan_version),
                    Param::from(pipeline.steps_total),
                    Param::from(pipeline.steps_done),
                    Param::from(pipeline.review_round),
                    Param::json(&pipeline.verdicts)?,
                    Param::from(now_ms()),
                ],
            )
        })?;
        Ok(())
    }
}
