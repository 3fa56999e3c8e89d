//! [`ClaimStore`] for both backends: `starts_pending` and `task_cleaning`, each row naming
//! the claim its command holds while it lives.

use super::rounds::refuse_busy;
use super::row::Row;
use super::{Database, Sql, bind, journal};
use crate::claims::{ClaimStore, CleanClaim, PendingStart};
use crate::error::StoreError;
use crate::journal::JournalEvent;
use crate::liveness::ClaimKey;

/// `BeingCleaned` when a clean of the task is recorded.
pub(crate) fn refuse_cleaning(
    sql: &mut dyn Sql,
    task_id: i64,
    slug: &str,
) -> Result<(), StoreError> {
    let claimed: Option<String> = sql.first(
        "SELECT lock_path FROM task_cleaning WHERE task_id = ?1",
        &bind![task_id],
        |row| row.get(0),
    )?;
    match claimed {
        Some(lock) => Err(StoreError::BeingCleaned {
            slug: slug.to_owned(),
            claim: ClaimKey::new(lock),
        }),
        None => Ok(()),
    }
}

const START_COLUMNS: &str = "slug, worktree, branch, base_commit, lock_path, commander, started_at";

fn pending_start(row: &dyn Row) -> Result<PendingStart, StoreError> {
    Ok(PendingStart {
        slug: row.get(0)?,
        worktree: row.get(1)?,
        branch: row.get(2)?,
        base_commit: row.get(3)?,
        claim: ClaimKey::new(row.get::<String>(4)?),
        commander: row.get(5)?,
        started_at: row.get(6)?,
    })
}

fn clean_claim(row: &dyn Row) -> Result<CleanClaim, StoreError> {
    Ok(CleanClaim {
        task_id: row.get(0)?,
        claim: ClaimKey::new(row.get::<String>(1)?),
        commander: row.get(2)?,
        started_at: row.get(3)?,
    })
}

impl<D: Database> ClaimStore for D {
    fn begin_start(&mut self, start: &PendingStart) -> Result<(), StoreError> {
        self.write(|sql| {
            let exists: Option<i64> = sql.first(
                "SELECT id FROM tasks WHERE slug = ?1",
                &bind![&start.slug],
                |row| row.get(0),
            )?;
            if exists.is_some() {
                return Err(StoreError::SlugTaken(start.slug.clone()));
            }
            let pending = sql.first(
                &format!("SELECT {START_COLUMNS} FROM starts_pending WHERE slug = ?1"),
                &bind![&start.slug],
                pending_start,
            )?;
            if let Some(pending) = pending {
                return Err(StoreError::StartPending {
                    slug: pending.slug,
                    claim: pending.claim,
                });
            }
            sql.execute(
                &format!(
                    "INSERT INTO starts_pending ({START_COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                ),
                &bind![
                    &start.slug,
                    &start.worktree,
                    &start.branch,
                    &start.base_commit,
                    start.claim.as_str(),
                    &start.commander,
                    start.started_at,
                ],
            )?;
            Ok(())
        })
    }

    fn pending_starts(&self) -> Result<Vec<PendingStart>, StoreError> {
        self.on_conn(|sql| {
            sql.rows(
                &format!("SELECT {START_COLUMNS} FROM starts_pending ORDER BY slug"),
                &[],
                pending_start,
            )
        })
    }

    fn end_start(&mut self, slug: &str, claim: &ClaimKey) -> Result<bool, StoreError> {
        let changed = self.on_conn(|sql| {
            sql.execute(
                "DELETE FROM starts_pending WHERE slug = ?1 AND lock_path = ?2",
                &bind![slug, claim.as_str()],
            )
        })?;
        Ok(changed > 0)
    }

    fn begin_clean(&mut self, claim: &CleanClaim) -> Result<(), StoreError> {
        self.write(|sql| {
            let slug: String = sql.value(
                "SELECT slug FROM tasks WHERE id = ?1",
                &bind![claim.task_id],
            )?;
            refuse_busy(sql, claim.task_id, &slug)?;
            refuse_cleaning(sql, claim.task_id, &slug)?;
            sql.execute(
                "INSERT INTO task_cleaning (task_id, lock_path, commander, started_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                &bind![
                    claim.task_id,
                    claim.claim.as_str(),
                    &claim.commander,
                    claim.started_at
                ],
            )?;
            // Written before anything is removed: a store that cannot record this removes
            // nothing.
            let started = JournalEvent::CleanStarted {};
            journal::append(sql, claim.task_id, None, Some(&claim.commander), &started)?;
            Ok(())
        })
    }

    fn cleaning(&self, task_id: i64) -> Result<Option<CleanClaim>, StoreError> {
        self.on_conn(|sql| {
            sql.first(
                "SELECT task_id, lock_path, commander, started_at FROM task_cleaning \
                 WHERE task_id = ?1",
                &bind![task_id],
                clean_claim,
            )
        })
    }

    fn end_clean(&mut self, task_id: i64, claim: &ClaimKey) -> Result<bool, StoreError> {
        let changed = self.on_conn(|sql| {
            sql.execute(
                "DELETE FROM task_cleaning WHERE task_id = ?1 AND lock_path = ?2",
                &bind![task_id, claim.as_str()],
            )
        })?;
        Ok(changed > 0)
    }
}
