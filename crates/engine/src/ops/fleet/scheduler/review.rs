//! Review: how a round this scheduler started ended. A rate limit pauses the round's model
//! (longer with each one in a row) and queues "continue" to the task for when the pause ends;
//! a worker continues a round interrupted by its host's death or lost lease (a few times in a
//! row); a round that ended well clears its model's pause. A round of a fleet with a remote is
//! looked at only once its lane has pushed the task's work there.

use super::{ENVIRONMENT_PATIENCE, Scheduler, mark_ended};
use crate::base::error::Result;
use crate::ops::fleet::backoff::{jitter, pause_after, rate_limited};
use crate::ops::fleet::events::{FleetEvent, FleetEvents};
use crate::ops::fleet::spec::CONTINUE;
use ganger_events::RoundStatus;
use ganger_store::{ModelPause, NewQueued, QueueItem, QueueKind, QueueState, Task, now_ms};
use std::collections::BTreeSet;
use std::time::Instant;

/// How many interrupted rounds in a row of one task a worker continues.
const CONTINUES: usize = 3;

impl Scheduler<'_> {
    /// Reviews this scheduler's delivered items whose round no longer runs (`busy`: the
    /// slugs with a running round) and returns the items still in flight.
    pub(super) fn review_ended(
        &mut self,
        mut in_flight: Vec<QueueItem>,
        busy: &BTreeSet<String>,
        events: &mut dyn FleetEvents,
    ) -> Result<Vec<QueueItem>> {
        let me = self.me.key().as_str().to_owned();
        let mut reviewed: BTreeSet<i64> = BTreeSet::new();
        for item in in_flight.iter().filter(|i| {
            i.state == QueueState::Delivered && i.claimed_by.as_deref() == Some(me.as_str())
        }) {
            // An ended item is no longer in flight; a round put back in the queue is a new
            // queued item, which the pass reads with the queue.
            if !busy.contains(&item.slug) && self.review(item, events)? {
                reviewed.insert(item.id);
            }
        }
        in_flight.retain(|item| !reviewed.contains(&item.id));
        Ok(in_flight)
    }

    /// Looks at how a round the scheduler started ended: a rate limit pauses the model and
    /// sends the task back to the queue to continue. Returns whether the item ended (its
    /// task perhaps queued again, as a new item); not while its round runs or its work is not
    /// on the remote yet.
    fn review(&mut self, item: &QueueItem, events: &mut dyn FleetEvents) -> Result<bool> {
        let found = match self.store.task(&item.slug)? {
            Some(task) => self.store.round(task.id, item.round)?.map(|r| (task, r)),
            None => None,
        };
        // The task or its round is gone (cleaned away): nothing to look at.
        let Some((task, round)) = found else {
            mark_ended(&mut *self.store, item, None)?;
            return Ok(true);
        };
        if round.status == RoundStatus::Running {
            return Ok(false);
        }
        if !self.pushed(item, &task, events) {
            return Ok(false);
        }
        let model = round.model.clone().or_else(|| task.model.clone());
        if let Some(line) = rate_limited(&*self.store, &task, &round) {
            let model_name = model
                .clone()
                .unwrap_or_else(|| format!("{}'s default", task.agent));
            let strikes = self
                .store
                .model_pauses()?
                .into_iter()
                .find(|p| p.model == model_name)
                .map_or(0, |p| p.strikes)
                + 1;
            let asked = round
                .summary
                .gateway
                .as_ref()
                .and_then(|g| g.retry_after_ms)
                .map(std::time::Duration::from_millis);
            let pause = pause_after(self.options.backoff, strikes, jitter(), asked);
            let until = now_ms() + pause.as_millis() as i64;
            self.store.pause_model(&ModelPause {
                model: model_name.clone(),
                until,
                strikes,
                reason: Some(line.clone()),
            })?;
            events.event(FleetEvent::Paused {
                model: model_name,
                until,
                strikes,
                reason: line.clone(),
            });
            self.continue_later(item, &task, &round, until)?;
            events.event(FleetEvent::Requeued {
                slug: task.slug.clone(),
                reason: format!("rate limited: {line}"),
            });
        } else if self.continues_interrupted(&task, &round)? {
            // Its host died or was cut off past its lease: another worker continues it.
            self.continue_later(item, &task, &round, 0)?;
            events.event(FleetEvent::Requeued {
                slug: task.slug.clone(),
                reason: format!(
                    "round {} was interrupted ({}); continued",
                    round.number,
                    round.reason.as_deref().unwrap_or("its host went away")
                ),
            });
        } else {
            if round.status == RoundStatus::Done
                && let Some(model) = &model
            {
                self.store.clear_pause(model)?;
            }
            mark_ended(&mut *self.store, item, Some(round.status))?;
        }
        events.event(FleetEvent::Ended {
            slug: task.slug.clone(),
            round: round.number,
            status: round.status.as_str().to_owned(),
            reason: round.reason.clone(),
        });
        Ok(true)
    }

    /// Ends `item` with its round's status and queues "continue" to its task, not before
    /// `not_before` (Unix ms; 0: at once).
    fn continue_later(
        &mut self,
        item: &QueueItem,
        task: &Task,
        round: &ganger_store::Round,
        not_before: i64,
    ) -> Result<()> {
        let next = NewQueued {
            slug: task.slug.clone(),
            kind: QueueKind::Fix,
            options: serde_json::json!({}),
            prompt_file: std::path::PathBuf::new(),
            prompt: Some(CONTINUE.to_owned()),
            commander: item.commander.clone(),
            generation: Some(task.generation),
            fleet: item.fleet.clone(),
            after: Vec::new(),
            not_before,
        };
        self.store.move_and_enqueue(
            item.id,
            QueueState::Delivered,
            QueueState::Ended,
            Some(round.status.as_str()),
            &next,
        )?;
        Ok(())
    }

    /// Whether a worker sends an interrupted round's task on: its host died or lost its
    /// lease, which a worker on another host survives, at most [`CONTINUES`] times in a row.
    fn continues_interrupted(&self, task: &Task, round: &ganger_store::Round) -> Result<bool> {
        if self.options.offer.is_none() || round.status != RoundStatus::Interrupted {
            return Ok(false);
        }
        let in_a_row = self
            .store
            .rounds(task.id)?
            .iter()
            .rev()
            .take_while(|r| r.status == RoundStatus::Interrupted)
            .count();
        Ok(in_a_row <= CONTINUES)
    }

    /// The remote `item`'s fleet names, if any: the item's fleet, or its task's (a fix queued
    /// to a fleet's task by hand belongs to no fleet itself).
    fn remote_of(&self, item: &QueueItem, task: &Task) -> Result<Option<String>> {
        if self.remotes.is_empty() {
            return Ok(None);
        }
        let fleet = match (&item.fleet, item.kind) {
            (Some(fleet), _) => Some(fleet.clone()),
            (None, QueueKind::Start) => None,
            (None, _) => self.store.task_fleet(task.id)?,
        };
        Ok(fleet.and_then(|fleet| self.remotes.get(&fleet).cloned()))
    }

    /// Whether the round of `item` may be looked at: its task's branch and snapshots are
    /// pushed to its fleet's remote (or it has none, or the round ran on another host). A
    /// push that fails is tried again at the next passes, as long as the environment's
    /// patience lasts; then the round is looked at with its work left unpushed, and said so.
    fn pushed(&mut self, item: &QueueItem, task: &Task, events: &mut dyn FleetEvents) -> bool {
        let pushed = match self.remote_of(item, task) {
            Ok(None) => return true,
            Err(e) => Err(e),
            // The push is the remote's lane's to make: asked for once, looked at when done.
            Ok(Some(remote)) => {
                if self.pushing.contains(&item.id) {
                    return false;
                }
                match self.pushes.remove(&item.id) {
                    Some(pushed) => pushed,
                    None => {
                        self.pushing.insert(item.id);
                        self.lanes.push(&remote, item.clone(), task.clone());
                        return false;
                    }
                }
            }
        };
        match pushed {
            Ok(()) => {
                self.unavailable.remove(&item.id);
                true
            }
            Err(e) => {
                let since = *self.unavailable.entry(item.id).or_insert_with(Instant::now);
                let given_up = since.elapsed() >= ENVIRONMENT_PATIENCE;
                let mut message = std::iter::once(e.message.clone())
                    .chain(e.causes())
                    .collect::<Vec<_>>()
                    .join(": ");
                if given_up {
                    message.push_str("; given up: the round's work stays on this host");
                }
                events.event(FleetEvent::Trouble { message });
                if given_up {
                    self.unavailable.remove(&item.id);
                }
                given_up
            }
        }
    }
}
