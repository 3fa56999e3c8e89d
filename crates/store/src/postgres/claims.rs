//! The PostgreSQL side of [`ClaimStore`]: `starts_pending` and `task_cleaning`.

use super::conn::Query;
use super::{PgStore, journal, path_text, running_round, write};
use crate::claims::{ClaimStore, CleanClaim, PendingStart};
use crate::error::StoreError;
use crate::liveness::ClaimKey;
use postgres::Row;
use std::path::PathBuf;

/// `BeingCleaned` when a clean of the task is recorded.
pub(crate) fn refuse_cleaning(
    tx: &mut impl Query,
    task_id: i64,
    slug: &str,
) -> Result<(), StoreError> {
    let claimed = tx.query_opt(
        "SELECT lock_path FROM task_cleaning WHERE task_id = $1",
        &[&task_id],
    )?;
    match claimed {
        Some(row) => Err(StoreError::BeingCleaned {
            slug: slug.to_owned(),
            claim: ClaimKey::new(row.try_get::<_, String>(0)?),
        }),
        None => Ok(()),
    }
}

fn pending_start(row: &Row) -> Result<PendingStart, StoreError> {
    Ok(PendingStart {
        slug: row.try_get(0)?,
        worktree: PathBuf::from(row.try_get::<_, String>(1)?),
        branch: row.try_get(2)?,
        base_commit: row.try_get(3)?,
        claim: ClaimKey::new(row.try_get::<_, String>(4)?),
        commander: row.try_get(5)?,
        started_at: row.try_get(6)?,
    })
}

const START_COLUMNS: &str = "slug, worktree, branch, base_commit, lock_path, commander, started_at";

fn clean_claim(row: &Row) -> Result<CleanClaim, StoreError> {
    Ok(CleanClaim {
        task_id: row.try_get(0)?,
        claim: ClaimKey::new(row.try_get::<_, String>(1)?),
        commander: row.try_get(2)?,
        started_at: row.try_get(3)?,
    })
}

impl ClaimStore for PgStore {
    fn begin_start(&mut self, start: &PendingStart) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        if tx
            .query_opt("SELECT id FROM tasks WHERE slug = $1", &[&start.slug])?
            .is_some()
        {
            return Err(StoreError::SlugTaken(start.slug.clone()));
        }
        let pending = tx.query_opt(
            &format!("SELECT {START_COLUMNS} FROM starts_pending WHERE slug = $1"),
            &[&start.slug],
        )?;
        if let Some(row) = pending {
            let pending = pending_start(&row)?;
            return Err(StoreError::StartPending {
                slug: pending.slug,
                claim: pending.claim,
            });
        }
        tx.execute(
            &format!(
                "INSERT INTO starts_pending ({START_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
            ),
            &[
                &start.slug,
                &path_text(&start.worktree),
                &start.branch,
                &start.base_commit,
                &start.claim.as_str(),
                &start.commander,
                &start.started_at,
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn pending_starts(&self) -> Result<Vec<PendingStart>, StoreError> {
        let found = self.conn()?.query(
            &format!("SELECT {START_COLUMNS} FROM starts_pending ORDER BY slug"),
            &[],
        )?;
        super::rows::all(found, pending_start)
    }

    fn end_start(&mut self, slug: &str, claim: &ClaimKey) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "DELETE FROM starts_pending WHERE slug = $1 AND lock_path = $2",
            &[&slug, &claim.as_str()],
        )?;
        Ok(changed > 0)
    }

    fn begin_clean(&mut self, claim: &CleanClaim) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let mut tx = write(&mut conn)?;
        let slug: String = tx
            .query_one("SELECT slug FROM tasks WHERE id = $1", &[&claim.task_id])?
            .try_get(0)?;
        if let Some((number, host_pid)) = running_round(&mut tx, claim.task_id)? {
            return Err(StoreError::Busy {
                slug,
                number,
                host_pid,
            });
        }
        refuse_cleaning(&mut tx, claim.task_id, &slug)?;
        tx.execute(
            "INSERT INTO task_cleaning (task_id, lock_path, commander, started_at) \
             VALUES ($1, $2, $3, $4)",
            &[
                &claim.task_id,
                &claim.claim.as_str(),
                &claim.commander,
                &claim.started_at,
            ],
        )?;
        // Written before anything is removed: a store that cannot record this removes nothing.
        journal(
            &mut tx,
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
        self.conn()?
            .query_opt(
                "SELECT task_id, lock_path, commander, started_at FROM task_cleaning \
                 WHERE task_id = $1",
                &[&task_id],
            )?
            .as_ref()
            .map(clean_claim)
            .transpose()
    }

    fn end_clean(&mut self, task_id: i64, claim: &ClaimKey) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "DELETE FROM task_cleaning WHERE task_id = $1 AND lock_path = $2",
            &[&task_id, &claim.as_str()],
        )?;
        Ok(changed > 0)
    }
}
