//! The SQLite side of [`OwnershipStore`]: `tasks.owner`, `generation` (schema 1), `inbound`
//! and `allowed` (migration 0008).

use super::{SqliteStore, insert_task, journal, load_task, to_json};
use crate::error::StoreError;
use crate::ownership::{OwnerChange, OwnershipStore};
use crate::records::{NewTask, Task};
use rusqlite::{OptionalExtension, params};

impl OwnershipStore for SqliteStore {
    fn change_owner(
        &mut self,
        task_id: i64,
        seen: i64,
        change: OwnerChange<'_>,
        commander: &str,
    ) -> Result<Task, StoreError> {
        let tx = self.write()?;
        let task = load_task(&tx, task_id)?;
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
            "UPDATE tasks SET owner = ?2, generation = generation + 1, allowed = '[]' WHERE id = ?1",
            params![task_id, to],
        )?;
        journal(
            &tx,
            task_id,
            None,
            change.kind(),
            Some(commander),
            serde_json::json!({ "from": task.owner, "to": to, "generation": task.generation + 1 }),
        )?;
        let stored = load_task(&tx, task_id)?;
        tx.commit()?;
        Ok(stored)
    }

    fn set_inbound(
        &mut self,
        task_id: i64,
        inbound: &str,
        commander: &str,
    ) -> Result<(), StoreError> {
        let tx = self.write()?;
        tx.execute(
            "UPDATE tasks SET inbound = ?2 WHERE id = ?1",
            params![task_id, inbound],
        )?;
        journal(
            &tx,
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
        let tx = self.write()?;
        tx.execute(
            "UPDATE tasks SET allowed = ?2 WHERE id = ?1",
            params![task_id, to_json(&allowed)?],
        )?;
        journal(
            &tx,
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
        let tx = self.write()?;
        // One session is one task's: two tasks sending rounds into it would interleave.
        let owner: Option<String> = tx
            .query_row(
                "SELECT slug FROM tasks WHERE agent = ?1 AND session = ?2",
                params![task.agent, session],
                |row| row.get(0),
            )
            .optional()?;
        if let Some(slug) = owner {
            return Err(StoreError::SessionTaken {
                session: session.to_owned(),
                slug,
            });
        }
        let id = insert_task(&tx, task)?;
        tx.execute(
            "UPDATE tasks SET session = ?2 WHERE id = ?1",
            params![id, session],
        )?;
        journal(
            &tx,
            id,
            None,
            "adopted",
            Some(&task.owner),
            serde_json::json!({ "session": session, "worktree": task.worktree }),
        )?;
        let stored = load_task(&tx, id)?;
        tx.commit()?;
        Ok(stored)
    }
}
