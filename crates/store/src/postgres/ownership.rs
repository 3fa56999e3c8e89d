//! The PostgreSQL side of [`OwnershipStore`]: `tasks.owner`, `generation`, `inbound` and
//! `allowed`.

use super::conn::Query;
use super::{PgStore, insert_task, journal, load_task, to_json, write};
use crate::error::StoreError;
use crate::ownership::{OwnerChange, OwnershipStore};
use crate::records::{NewTask, Task};

impl OwnershipStore for PgStore {
    fn change_owner(
        &mut self,
        task_id: i64,
        seen: i64,
        change: OwnerChange<'_>,
        commander: &str,
    ) -> Result<Task, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let task = load_task(&mut tx, task_id)?;
        if task.generation != seen {
            return Err(StoreError::Stale {
                slug: task.slug,
                sent: seen,
                now: task.generation,
                owner: task.owner,
            });
        }
        let to = change.new_owner();
        tx.execute(
            "UPDATE tasks SET owner = $2, generation = generation + 1, allowed = '[]' WHERE id = $1",
            &[&task_id, &to],
        )?;
        journal(
            &mut tx,
            task_id,
            None,
            change.kind(),
            Some(commander),
            serde_json::json!({ "from": task.owner, "to": to, "generation": task.generation + 1 }),
        )?;
        let stored = load_task(&mut tx, task_id)?;
        tx.commit()?;
        Ok(stored)
    }

    fn set_inbound(
        &mut self,
        task_id: i64,
        inbound: &str,
        commander: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        tx.execute(
            "UPDATE tasks SET inbound = $2 WHERE id = $1",
            &[&task_id, &inbound],
        )?;
        journal(
            &mut tx,
            task_id,
            None,
            "policy",
            Some(commander),
            serde_json::json!({ "inbound": inbound }),
        )?;
        tx.commit()?;
        Ok(())
    }

    fn set_allowed(
        &mut self,
        task_id: i64,
        allowed: &[String],
        commander: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        tx.execute(
            "UPDATE tasks SET allowed = $2 WHERE id = $1",
            &[&task_id, &to_json(&allowed)?],
        )?;
        journal(
            &mut tx,
            task_id,
            None,
            "allowed",
            Some(commander),
            serde_json::json!({ "allowed": allowed }),
        )?;
        tx.commit()?;
        Ok(())
    }

    fn adopt_task(&mut self, task: &NewTask, session: &str) -> Result<Task, StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        // One session is one task's: two tasks sending rounds into it would interleave.
        let owner = tx.query_opt(
            "SELECT slug FROM tasks WHERE agent = $1 AND session = $2",
            &[&task.agent, &session],
        )?;
        if let Some(row) = owner {
            return Err(StoreError::SessionTaken {
                session: session.to_owned(),
                slug: row.try_get(0)?,
            });
        }
        let id = insert_task(&mut tx, task)?;
        tx.execute(
            "UPDATE tasks SET session = $2 WHERE id = $1",
            &[&id, &session],
        )?;
        journal(
            &mut tx,
            id,
            None,
            "adopted",
            Some(&task.owner),
            serde_json::json!({ "session": session, "worktree": task.worktree }),
        )?;
        let stored = load_task(&mut tx, id)?;
        tx.commit()?;
        Ok(stored)
    }
}
