//! [`OwnershipStore`] for both backends: `tasks.owner` and `generation`, `inbound` and
//! `allowed`, and tasks adopted from a session, each change with its journal entry.

use super::tasks::{insert_task, load_task};
use super::{Database, Param, bind, journal};
use crate::error::StoreError;
use crate::journal::{JournalEvent, OwnerMove};
use crate::ownership::{OwnerChange, OwnershipStore};
use crate::records::{NewTask, Task};

impl<D: Database> OwnershipStore for D {
    fn change_owner(
        &mut self,
        task_id: i64,
        seen: i64,
        change: OwnerChange<'_>,
        commander: &str,
    ) -> Result<Task, StoreError> {
        self.write(|sql| {
            let task = load_task(sql, task_id)?;
            if task.generation != seen {
                return Err(StoreError::Stale {
                    slug: task.slug,
                    sent: seen,
                    now: task.generation,
                    owner: task.owner,
                });
            }
            let to = change.new_owner();
            sql.execute(
                "UPDATE tasks SET owner = ?2, generation = generation + 1, allowed = '[]' \
                 WHERE id = ?1",
                &bind![task_id, to],
            )?;
            let moved = OwnerMove {
                from: task.owner,
                to: to.to_owned(),
                generation: task.generation + 1,
            };
            journal::append(sql, task_id, None, Some(commander), &change.event(moved))?;
            load_task(sql, task_id)
        })
    }

    fn set_inbound(
        &mut self,
        task_id: i64,
        inbound: &str,
        commander: &str,
    ) -> Result<(), StoreError> {
        self.write(|sql| {
            sql.execute(
                "UPDATE tasks SET inbound = ?2 WHERE id = ?1",
                &bind![task_id, inbound],
            )?;
            let policy = JournalEvent::Policy {
                inbound: inbound.to_owned(),
            };
            journal::append(sql, task_id, None, Some(commander), &policy)?;
            Ok(())
        })
    }

    fn set_allowed(
        &mut self,
        task_id: i64,
        allowed: &[String],
        commander: &str,
    ) -> Result<(), StoreError> {
        self.write(|sql| {
            sql.execute(
                "UPDATE tasks SET allowed = ?2 WHERE id = ?1",
                &[Param::from(task_id), Param::json(allowed)?],
            )?;
            let event = JournalEvent::Allowed {
                allowed: allowed.to_vec(),
            };
            journal::append(sql, task_id, None, Some(commander), &event)?;
            Ok(())
        })
    }

    fn adopt_task(&mut self, task: &NewTask, session: &str) -> Result<Task, StoreError> {
        self.write(|sql| {
            // One session is one task's: two tasks sending rounds into it would interleave.
            let owner: Option<String> = sql.first(
                "SELECT slug FROM tasks WHERE agent = ?1 AND session = ?2",
                &bind![&task.agent, session],
                |row| row.get(0),
            )?;
            if let Some(slug) = owner {
                return Err(StoreError::SessionTaken {
                    session: session.to_owned(),
                    slug,
                });
            }
            let id = insert_task(sql, task)?;
            sql.execute(
                "UPDATE tasks SET session = ?2 WHERE id = ?1",
                &bind![id, session],
            )?;
            let adopted = JournalEvent::Adopted {
                session: session.to_owned(),
                worktree: task.worktree.clone(),
            };
            journal::append(sql, id, None, Some(&task.owner), &adopted)?;
            load_task(sql, id)
        })
    }
}
