//! The SQLite side of [`ClaimStore`]: `starts_pending` and `task_cleaning` (migration 0012).

use super::{SqliteStore, journal, path_text, running_round};
use crate::claims::{ClaimStore, CleanClaim, PendingStart};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use rusqlite::{OptionalExtension, Transaction, params};
use std::path::PathBuf;

/// `BeingCleaned` when a clean of the task is recorded.
pub(crate) fn refuse_cleaning(
    tx: &Transaction<'_>,
    task_id: i64,
    slug: &str,
) -> Result<(), StoreError> {
    let claimed: Option<String> = tx
        .query_row(
            "SELECT lock_path FROM task_cleaning WHERE task_id = ?1",
            [task_id],
            |row| row.get(0),
        )
        .optional()?;
    match claimed {
        Some(lock) => Err(StoreError::BeingCleaned {
            slug: slug.to_owned(),
            claim: ClaimKey::new(lock),
        }),
        None => Ok(()),
    }
}

fn pending_start(row: &rusqlite::Row<'_>) -> rusqlite::Result<PendingStart> {
    Ok(PendingStart {
        slug: row.get(0)?,
        worktree: PathBuf::from(row.get::<_, String>(1)?),
        branch: row.get(2)?,
        base_commit: row.get(3)?,
        claim: ClaimKey::new(row.get::<_, String>(4)?),
        commander: row.get(5)?,
        started_at: row.get(6)?,
    })
}

const START_COLUMNS: &str = "slug, worktree, branch, base_commit, lock_path, commander, started_at";

impl ClaimStore for SqliteStore {
    fn begin_start(&mut self, start: &PendingStart) -> Result<(), StoreError> {
        let tx = self.write()?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT id FROM tasks WHERE slug = ?1",
                [&start.slug],
                |row| row.get(0),
            )
            .optional()?;
        if exists.is_some() {
            return Err(StoreError::SlugTaken(start.slug.clone()));
        }
        let pending: Option<PendingStart> = tx
            .query_row(
                &format!("SELECT {START_COLUMNS} FROM starts_pending WHERE slug = ?1"),
                [&start.slug],
                pending_start,
            )
            .optional()?;
        if let Some(pending) = pending {
            return Err(StoreError::StartPending {
                slug: pending.slug,
                claim: pending.claim,
            });
        }
        tx.execute(
            &format!(
                "INSERT INTO starts_pending ({START_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            ),
            params![
                start.slug,
                path_text(&start.worktree),
                start.branch,
                start.base_commit,
                start.claim.as_str(),
                start.commander,
                start.started_at,
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn pending_starts(&self) -> Result<Vec<PendingStart>, StoreError> {
        let mut statement = self.conn.prepare(&format!(
            "SELECT {START_COLUMNS} FROM starts_pending ORDER BY slug"
        ))?;
        let starts = statement
            .query_map([], pending_start)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(starts)
    }

    fn end_start(&mut self, slug: &str, claim: &ClaimKey) -> Result<bool, StoreError> {
        let changed = self.conn.execute(
            "DELETE FROM starts_pending WHERE slug = ?1 AND lock_path = ?2",
            params![slug, claim.as_str()],
        )?;
        Ok(changed > 0)
    }

    fn begin_clean(&mut self, claim: &CleanClaim) -> Result<(), StoreError> {
        let tx = self.write()?;
        let slug: String = tx.query_row(
            "SELECT slug FROM tasks WHERE id = ?1",
            [claim.task_id],
            |row| row.get(0),
        )?;
        if let Some((number, host_pid)) = running_round(&tx, claim.task_id)? {
            return Err(StoreError::Busy {
                slug,
                number,
                host_pid,
            });
        }
        refuse_cleaning(&tx, claim.task_id, &slug)?;
        tx.execute(
            "INSERT INTO task_cleaning (task_id, lock_path, commander, started_at) \
             VALUES (?1, ?2, ?3, ?4)",
            params![
                claim.task_id,
                claim.claim.as_str(),
                claim.commander,
                claim.started_at
            ],
        )?;
        // Written before anything is removed: a store that cannot record this removes nothing.
        journal(
            &tx,
            claim.task_id,
            None,
            "clean-started",
            Some(&claim.commander),
            serde_json::json!({}),
        )?;
        tx.commit()?;
        Ok(())
    }

    fn cleaning(&self, task_id: i64) -> Result<Option<CleanClaim>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT task_id, lock_path, commander, started_at FROM task_cleaning \
                 WHERE task_id = ?1",
                [task_id],
                |row| {
                    Ok(CleanClaim {
                        task_id: row.get(0)?,
                        claim: ClaimKey::new(row.get::<_, String>(1)?),
                        commander: row.get(2)?,
                        started_at: row.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    fn end_clean(&mut self, task_id: i64, claim: &ClaimKey) -> Result<bool, StoreError> {
        let changed = self.conn.execute(
            "DELETE FROM task_cleaning WHERE task_id = ?1 AND lock_path = ?2",
            params![task_id, claim.as_str()],
        )?;
        Ok(changed > 0)
    }
}
