//! A fleet's submission as one transaction (`fleet run|submit`): whose each slug is, the fleet
//! and its budget saved, and its items queued only where nothing else got there first, all
//! decided under the write lock, as SQLite's is.

use super::conn::Query;
use super::queue::{insert_item, save_fleet_row};
use crate::error::StoreError;
use crate::queue::{FleetSubmission, QueueItem, SlugHolder};

/// The states of an item still to do.
const OPEN: &str = "('queued', 'delivering', 'delivered')";

/// Who holds `slug`: its task's fleet, else the fleet of its open items.
fn holder(conn: &mut impl Query, slug: &str) -> Result<SlugHolder, StoreError> {
    let task = conn.query_opt(
        "SELECT t.id, f.fleet FROM tasks t LEFT JOIN fleet_tasks f ON f.task_id = t.id \
         WHERE t.slug = $1",
        &[&slug],
    )?;
    let task: Option<Option<String>> = task.map(|row| row.try_get(1)).transpose()?;
    let mut fleet_of = |sql: &str| -> Result<Option<Option<String>>, StoreError> {
        Ok(conn
            .query_opt(sql, &[&slug])?
            .map(|row| row.try_get(0))
            .transpose()?)
    };
    let found = match task {
        Some(Some(fleet)) => return Ok(SlugHolder::Fleet(fleet)),
        // A start killed between recording its task and linking it to its fleet leaves the
        // task unlinked: the start item it was delivered from says whose it is.
        Some(None) => fleet_of(
            "SELECT fleet FROM queue WHERE slug = $1 AND kind = 'start' \
             AND state IN ('delivered', 'ended') ORDER BY id DESC LIMIT 1",
        )?
        .or(Some(None)),
        None => fleet_of(&format!(
            "SELECT fleet FROM queue WHERE slug = $1 AND state IN {OPEN} ORDER BY id LIMIT 1"
        ))?,
    };
    Ok(match found {
        None => SlugHolder::Free,
        Some(Some(fleet)) => SlugHolder::Fleet(fleet),
        Some(None) => SlugHolder::NoFleet,
    })
}

/// The first of `slugs` that `fleet` may not use, with its holder.
pub(crate) fn conflict(
    conn: &mut impl Query,
    fleet: &str,
    slugs: &[String],
) -> Result<Option<(String, SlugHolder)>, StoreError> {
    for slug in slugs {
        match holder(conn, slug)? {
            SlugHolder::Free => {}
            SlugHolder::Fleet(own) if own == fleet => {}
            other => return Ok(Some((slug.clone(), other))),
        }
    }
    Ok(None)
}

/// Checks, saves and queues `submission` in `tx` (see `QueueStore::submit_fleet`).
pub(crate) fn submit(
    tx: &mut impl Query,
    submission: &FleetSubmission,
) -> Result<Vec<Option<QueueItem>>, StoreError> {
    let fleet = &submission.fleet.name;
    if let Some((slug, holder)) = conflict(tx, fleet, &submission.slugs)? {
        return Err(StoreError::FleetConflict {
            slug,
            fleet: fleet.clone(),
            holder: match holder {
                SlugHolder::Fleet(other) => Some(other),
                SlugHolder::Free | SlugHolder::NoFleet => None,
            },
        });
    }
    save_fleet_row(tx, &submission.fleet)?;
    if let Some(budget) = &submission.budget {
        super::evidence::save_fleet_budget(tx, fleet, budget.usd, budget.tokens)?;
    }
    let mut queued = Vec::with_capacity(submission.items.len());
    for wanted in &submission.items {
        let slug = wanted.item.slug.as_str();
        let open: bool = tx
            .query_one(
                &format!("SELECT EXISTS (SELECT 1 FROM queue WHERE slug = $1 AND state IN {OPEN})"),
                &[&slug],
            )?
            .try_get(0)?;
        let rounds: Option<u32> = tx
            .query_opt("SELECT rounds FROM tasks WHERE slug = $1", &[&slug])?
            .map(|row| super::rows::narrow(row.try_get(0)?, "rounds"))
            .transpose()?;
        if open || rounds != wanted.rounds {
            // Queued by a concurrent submission, or started or continued since.
            queued.push(None);
            continue;
        }
        queued.push(Some(insert_item(tx, &wanted.item)?));
    }
    Ok(queued)
}
