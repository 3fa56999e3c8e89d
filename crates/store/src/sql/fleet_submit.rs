//! A fleet's submission as one transaction (`fleet run|submit`): whose each slug is, the fleet
//! and its budget saved, and its items queued only where nothing else got there first. Two
//! fleets may not share a slug (a task's work would count for both, and one fleet's `after`
//! would wait on the other's result), and concurrent submissions of one file must queue each
//! task once: both are decided here, under the write lock, not from an earlier read.

use super::queue::{insert_item, save_fleet_row};
use super::{Database, Sql, bind};
use crate::error::StoreError;
use crate::queue::{FleetSubmission, QueueItem, SlugHolder};

/// The states of an item still to do.
const OPEN: &str = "('queued', 'delivering', 'delivered')";

/// Who holds `slug`: its task's fleet, else the fleet of its open items.
fn holder(sql: &mut dyn Sql, slug: &str) -> Result<SlugHolder, StoreError> {
    let task: Option<Option<String>> = sql.first(
        "SELECT t.id, f.fleet FROM tasks t LEFT JOIN fleet_tasks f ON f.task_id = t.id \
         WHERE t.slug = ?1",
        &bind![slug],
        |row| row.get(1),
    )?;
    let mut fleet_of = |statement: &str| -> Result<Option<Option<String>>, StoreError> {
        sql.first(statement, &bind![slug], |row| row.get(0))
    };
    let found = match task {
        Some(Some(fleet)) => return Ok(SlugHolder::Fleet(fleet)),
        // `start()` links its task to the fleet just after recording it, in a second
        // transaction: a start killed between the two leaves the task unlinked, and the
        // start item it was delivered from says whose it is.
        Some(None) => fleet_of(
            "SELECT fleet FROM queue WHERE slug = ?1 AND kind = 'start' \
             AND state IN ('delivered', 'ended') ORDER BY id DESC LIMIT 1",
        )?
        .or(Some(None)),
        None => fleet_of(&format!(
            "SELECT fleet FROM queue WHERE slug = ?1 AND state IN {OPEN} ORDER BY id LIMIT 1"
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
    sql: &mut dyn Sql,
    fleet: &str,
    slugs: &[String],
) -> Result<Option<(String, SlugHolder)>, StoreError> {
    for slug in slugs {
        match holder(sql, slug)? {
            SlugHolder::Free => {}
            SlugHolder::Fleet(own) if own == fleet => {}
            other => return Ok(Some((slug.clone(), other))),
        }
    }
    Ok(None)
}

/// Checks, saves and queues `submission` in `sql`, a write transaction (see
/// `QueueStore::submit_fleet`).
pub(crate) fn submit(
    db: &impl Database,
    sql: &mut dyn Sql,
    submission: &FleetSubmission,
) -> Result<Vec<Option<QueueItem>>, StoreError> {
    let fleet = &submission.fleet.name;
    if let Some((slug, holder)) = conflict(sql, fleet, &submission.slugs)? {
        return Err(StoreError::FleetConflict {
            slug,
            fleet: fleet.clone(),
            holder: match holder {
                SlugHolder::Fleet(other) => Some(other),
                SlugHolder::Free | SlugHolder::NoFleet => None,
            },
        });
    }
    save_fleet_row(sql, &submission.fleet)?;
    if let Some(budget) = &submission.budget {
        super::evidence::save_fleet_budget(sql, fleet, budget.usd, budget.tokens)?;
    }
    let mut queued = Vec::with_capacity(submission.items.len());
    for wanted in &submission.items {
        let slug = wanted.item.slug.as_str();
        let open: bool = sql.value(
            &format!("SELECT EXISTS (SELECT 1 FROM queue WHERE slug = ?1 AND state IN {OPEN})"),
            &bind![slug],
        )?;
        let rounds: Option<u32> = sql.first(
            "SELECT rounds FROM tasks WHERE slug = ?1",
            &bind![slug],
            |row| row.get(0),
        )?;
        if open || rounds != wanted.rounds {
            // Queued by a concurrent submission, or started or continued since.
            queued.push(None);
            continue;
        }
        queued.push(Some(insert_item(db, sql, &wanted.item)?));
    }
    Ok(queued)
}
