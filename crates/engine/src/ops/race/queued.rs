//! A race through the scheduler's queue (`--queue`): each attempt is queued as
//! `start --queue` queues a task, under the race's fleet (`race:SLUG`, its budget; or the
//! fleet file's whose task the race is), for `ganger serve` to start under its limits
//! (`--max`, `--max-agent`, `--max-model`). The race follows its items until each has become
//! a task (then it follows the task as it follows any attempt) or was refused;
//! `--first-green` withdraws the items not delivered.

use super::{RaceOptions, attempt_slug, say};
use crate::base::error::{ErrorKind, Result};
use crate::base::notice::Notices;
use crate::task::queued::queue_start_of;
use crate::task::race_request::Request;
use crate::task::race_spec::AttemptSpec;
use crate::task::start::StartOptions;
use ganger_store::{Backend, QueueItem, QueueState, RaceRecord};
use std::collections::HashMap;

/// The race's queued attempts by slug, the latest item of each.
pub(super) fn items(store: &dyn Backend, race: &RaceRecord) -> Result<HashMap<String, QueueItem>> {
    Ok(store
        .queue_items(Some(&Request::fleet_of(race)))?
        .into_iter()
        .map(|item| (item.slug.clone(), item))
        .collect())
}

/// Queues attempt `number`, `attempt` on the brief `prompt`; one queued already (by another
/// driver of the race) is left as it is.
pub(super) fn queue_attempt(
    store: &mut dyn Backend,
    race: &RaceRecord,
    (number, attempt): (u32, &AttemptSpec),
    prompt: &str,
    options: &RaceOptions,
    notices: &mut dyn Notices,
) -> Result<()> {
    let start = StartOptions {
        slug: attempt_slug(&race.slug, number),
        agent: Some(attempt.agent.clone()),
        model: attempt.model.clone(),
        budget: ganger_store::Budget::default(),
        dotted: true,
        ..options.start.clone()
    };
    let fleet = Some(Request::fleet_of(race));
    match queue_start_of(store, &start, prompt, &race.owner, fleet) {
        Ok(_) => say(
            notices,
            &race.slug,
            format!(
                "attempt {number} ({}, {}) queued as {} for `ganger serve`",
                attempt.agent,
                attempt.model.as_deref().unwrap_or("its default model"),
                start.slug
            ),
        ),
        Err(e) if e.kind == ErrorKind::Conflict => {}
        Err(e) => return Err(e),
    }
    Ok(())
}

/// `--first-green`: the attempts still waiting in the queue are withdrawn (refused, with
/// why), so that the scheduler never starts them; true while an item is being delivered, or
/// was claimed for delivery as it was being withdrawn (its task, once made, is cancelled as
/// a running attempt is).
pub(super) fn withdraw(store: &mut dyn Backend, race: &RaceRecord, winner: u32) -> Result<bool> {
    let why = format!("cancelled: attempt {winner} passed first (--first-green)");
    let mut delivering = false;
    for item in items(store, race)?.into_values() {
        match item.state {
            QueueState::Queued => {
                let withdrawn = store.move_item(
                    item.id,
                    QueueState::Queued,
                    QueueState::Refused,
                    Some(&why),
                    None,
                )?;
                // Claimed by the scheduler meanwhile: being delivered, looked at again.
                delivering |= !withdrawn;
            }
            QueueState::Delivering => delivering = true,
            _ => {}
        }
    }
    Ok(delivering)
}
