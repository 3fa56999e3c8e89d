//! Recovery: the items a scheduler found dead had claimed (or that recorded no claimant) are
//! taken over. One that was being delivered is settled from the store's rounds: delivered if
//! its round was recorded, sent again if its round never started the agent, back in the queue
//! otherwise (a start's half-made worktree removed first). One that was delivered is followed
//! from now on, as if this scheduler had delivered it.

use super::{IN_FLIGHT, Scheduler, mark_delivered};
use crate::base::error::Result;
use crate::ops::fleet::events::{FleetEvent, FleetEvents};
use ganger_events::RoundStatus;
use ganger_store::{ClaimKey, NewQueued, QueueItem, QueueKind, QueueState, Task};
use std::collections::BTreeMap;

impl Scheduler<'_> {
    /// The items in flight (being delivered or delivered, by any scheduler), after this
    /// scheduler took over the ones whose scheduler is dead.
    pub(super) fn in_flight(&mut self, events: &mut dyn FleetEvents) -> Result<Vec<QueueItem>> {
        let in_flight = self.store.items_in(IN_FLIGHT, 0, u32::MAX)?;
        if self.adopt_orphans(&in_flight, events)? {
            return Ok(self.store.items_in(IN_FLIGHT, 0, u32::MAX)?);
        }
        Ok(in_flight)
    }

    /// Takes over the items a dead scheduler (or one that recorded no claimant) had claimed:
    /// one being delivered is recovered at once, one delivered is followed from now on; and
    /// recovers this scheduler's own left by a failed pass. True when anything changed.
    fn adopt_orphans(&mut self, items: &[QueueItem], events: &mut dyn FleetEvents) -> Result<bool> {
        let me = self.me.key().as_str().to_owned();
        let mut adopted = false;
        let mut alive: BTreeMap<String, bool> = BTreeMap::new();
        for item in items {
            if !matches!(item.state, QueueState::Delivering | QueueState::Delivered) {
                continue;
            }
            if item.claimed_by.as_deref() == Some(me.as_str()) {
                // Local deliveries end within their pass, and a lane's are known: one of this
                // scheduler's still being delivered otherwise is one a failed pass left (the
                // database went away under it), and is settled as a dead scheduler's is.
                if item.state == QueueState::Delivering && !self.in_lanes.contains(&item.id) {
                    self.recover_item(item, true, events)?;
                    adopted = true;
                }
                continue;
            }
            if let Some(claimant) = &item.claimed_by {
                let lives = match alive.get(claimant) {
                    Some(lives) => *lives,
                    None => {
                        // Not known to be dead is alive: its items are left to it.
                        let lives = self
                            .store
                            .is_alive(&ClaimKey::new(claimant.clone()))
                            .unwrap_or(true);
                        alive.insert(claimant.clone(), lives);
                        lives
                    }
                };
                if lives {
                    continue;
                }
            }
            if !self
                .store
                .take_over_item(item.id, item.claimed_by.as_deref(), self.me.key())?
            {
                continue;
            }
            adopted = true;
            if item.state == QueueState::Delivering {
                self.recover_item(item, false, events)?;
            }
        }
        Ok(adopted)
    }

    /// An item a dead scheduler was delivering (or this one, `own`, in a pass that failed):
    /// delivered if its round was recorded, else back in the queue (a start's half-made
    /// worktree removed first). A round this scheduler started is told as started now, since
    /// the failed pass could not tell it.
    fn recover_item(
        &mut self,
        item: &QueueItem,
        own: bool,
        events: &mut dyn FleetEvents,
    ) -> Result<()> {
        let claimed = item.claimed_at.unwrap_or(item.updated_at);
        let task = self.store.task(&item.slug)?;
        let ours = match &task {
            Some(task) => self
                .store
                .rounds(task.id)?
                .into_iter()
                .find(|r| r.started_at >= claimed && r.commander == item.commander),
            None => None,
        };
        match (task, ours) {
            (Some(task), Some(round))
                if round.status == RoundStatus::Interrupted && round.agent.is_none() =>
            {
                // Recorded, but the host never started the agent: nothing ran. Send the
                // same prompt again, as a fix of the task that now exists.
                self.resend(
                    item,
                    &task,
                    "its round was interrupted before the agent started",
                )?;
                events.event(FleetEvent::Requeued {
                    slug: item.slug.clone(),
                    reason: "the scheduler was stopped while starting it".into(),
                });
            }
            (Some(task), Some(round)) => {
                mark_delivered(&mut *self.store, item, round.number)?;
                if own {
                    self.started(&task, &round, events);
                }
            }
            (None, _) if item.kind == QueueKind::Start => {
                self.remove_half_made(&item.slug)?;
                self.store.requeue(item.id, 0, None)?;
            }
            _ => self.store.requeue(item.id, 0, None)?,
        }
        Ok(())
    }

    /// Ends `item` and queues its prompt again as a fix of `task`.
    fn resend(&mut self, item: &QueueItem, task: &Task, why: &str) -> Result<()> {
        let next = NewQueued {
            slug: item.slug.clone(),
            kind: QueueKind::Fix,
            options: serde_json::json!({}),
            prompt_file: item.prompt_file.clone(),
            prompt: item.prompt.clone(),
            commander: item.commander.clone(),
            generation: Some(task.generation),
            fleet: item.fleet.clone(),
            after: Vec::new(),
            not_before: 0,
        };
        self.store.move_and_enqueue(
            item.id,
            item.state,
            QueueState::Ended,
            Some(&format!("{why}; sent again")),
            &next,
        )?;
        Ok(())
    }

    /// The worktree and branch a start killed half way made, before its task was recorded:
    /// the start recorded itself first (`starts_pending`), so its record says what to settle.
    fn remove_half_made(&mut self, slug: &str) -> Result<()> {
        for pending in ganger_store::ClaimStore::pending_starts(&*self.store)? {
            if pending.slug == slug {
                crate::evidence::half_made::settle_dead_start(self.ws, &mut *self.store, &pending)?;
            }
        }
        Ok(())
    }
}
