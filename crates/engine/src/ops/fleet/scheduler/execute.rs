//! The executor: carries out what the plan decided. It claims items and delivers them (local
//! ones a few at a time on threads of the pass, a fleet remote's on the remote's lane, off the
//! loop), refuses items, and records how each delivery went: a round started, refused, stale,
//! or back in the queue (not now, or the environment failed, for as long as its patience lasts).

use super::{ENVIRONMENT_PATIENCE, Scheduler};
use crate::base::error::Result;
use crate::ops::fleet::deliver::Delivery;
use crate::ops::fleet::events::{FleetEvent, FleetEvents};
use crate::ops::fleet::lanes::Finished;
use ganger_store::{QueueItem, QueueState, now_ms};
use std::time::Instant;

impl Scheduler<'_> {
    /// Records how the delivery of `item` (claimed by this scheduler) went.
    pub(super) fn record_delivery(
        &mut self,
        item: &QueueItem,
        delivery: Delivery,
        events: &mut dyn FleetEvents,
    ) -> Result<()> {
        match delivery {
            Delivery::Started { task, round } => {
                self.unavailable.remove(&item.id);
                self.store.move_item(
                    item.id,
                    QueueState::Delivering,
                    QueueState::Delivered,
                    None,
                    Some(round.number),
                )?;
                self.watch(round.claim.clone());
                self.totals.started += 1;
                events.event(FleetEvent::Started {
                    slug: task.slug.clone(),
                    round: round.number,
                    agent: task.agent.clone(),
                    model: round.model.clone(),
                });
            }
            Delivery::Refused(reason) => {
                self.refuse(item, QueueState::Refused, reason, events)?;
            }
            Delivery::Stale(reason) => {
                self.refuse(item, QueueState::Stale, reason, events)?;
            }
            Delivery::Later(reason) => {
                let later = now_ms() + self.options.poll.as_millis() as i64;
                self.store.requeue(item.id, later, Some(&reason))?;
            }
            Delivery::Unavailable(reason) => {
                let since = *self.unavailable.entry(item.id).or_insert_with(Instant::now);
                if since.elapsed() >= ENVIRONMENT_PATIENCE {
                    self.unavailable.remove(&item.id);
                    let reason = format!(
                        "{reason} (for {} s, on every try)",
                        ENVIRONMENT_PATIENCE.as_secs()
                    );
                    self.refuse(item, QueueState::Refused, reason, events)?;
                } else {
                    let later = now_ms() + self.options.poll.as_millis() as i64;
                    self.store.requeue(item.id, later, Some(&reason))?;
                }
            }
        }
        Ok(())
    }

    /// Records what the remotes' lanes finished since the last pass: their deliveries, and
    /// the pushes the items' reviews wait for.
    pub(super) fn lanes_finished(&mut self, events: &mut dyn FleetEvents) -> Result<()> {
        let mut finished = self.lanes.finished().into_iter();
        while let Some(done) = finished.next() {
            match done {
                Finished::Delivered(item, delivery) => {
                    self.in_lanes.remove(&item.id);
                    if let Err(e) = self.record_delivery(&item, delivery, events) {
                        // What is not recorded now is found by recovery: the item is still
                        // being delivered in the store, and no longer in a lane.
                        for rest in finished {
                            if let Finished::Delivered(item, _) = rest {
                                self.in_lanes.remove(&item.id);
                            }
                        }
                        return Err(e);
                    }
                }
                Finished::Pushed(id, pushed) => {
                    self.pushing.remove(&id);
                    self.pushes.insert(id, pushed);
                }
            }
        }
        Ok(())
    }

    pub(super) fn refuse(
        &mut self,
        item: &QueueItem,
        to: QueueState,
        reason: String,
        events: &mut dyn FleetEvents,
    ) -> Result<()> {
        self.store
            .move_item(item.id, item.state, to, Some(&reason), None)?;
        // A claimed item was moved from `delivering`.
        self.store
            .move_item(item.id, QueueState::Delivering, to, Some(&reason), None)?;
        self.totals.refused += 1;
        events.event(FleetEvent::Refused {
            slug: item.slug.clone(),
            reason,
        });
        Ok(())
    }
}
