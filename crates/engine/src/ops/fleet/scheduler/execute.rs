//! The executor: carries out what the plan decided. It claims items and delivers them (local
//! ones a few at a time on threads of the pass, a fleet remote's on the remote's lane, off the
//! loop), refuses items, and records how each delivery went: a round started, refused, stale,
//! or back in the queue (not now, or the environment failed, for as long as its patience lasts).

use super::plan::{Action, Planner};
use super::view::View;
use super::{ENVIRONMENT_PATIENCE, Scheduler, mark_delivered};
use crate::base::error::Result;
use crate::base::notice::Notice;
use crate::ops::fleet::deliver::{Delivery, deliver};
use crate::ops::fleet::events::{FleetEvent, FleetEvents};
use crate::ops::fleet::lanes::Finished;
use ganger_store::{QueueItem, QueueState, now_ms};
use std::time::{Duration, Instant};

/// How many deliveries run at once (each is mostly a `git worktree add` and a process start).
const PARALLEL_DELIVERIES: usize = 8;

/// The items a pass claimed, by where they are delivered.
#[derive(Debug, Default)]
pub(super) struct Claimed {
    /// Here, on threads of the pass.
    here: Vec<QueueItem>,
    /// By the lane of a fleet's remote (the item, the remote).
    lanes: Vec<(QueueItem, String)>,
}

impl Scheduler<'_> {
    /// Walks the plan over `view`: reads what it asks for, and claims and refuses items as it
    /// decides (a claim another scheduler won counts for nothing). Returns what was claimed
    /// and when the next pass is due.
    pub(super) fn claim(
        &mut self,
        mut view: View,
        events: &mut dyn FleetEvents,
    ) -> Result<(Claimed, Option<i64>)> {
        let mut planner = Planner::new(&view);
        let mut claimed = Claimed::default();
        let mut wake = None;
        while let Some(action) = planner.next(&view) {
            match action {
                Action::Read(need) => view.learn(&*self.store, need)?,
                Action::Deliver(id) | Action::ToLane { item: id, .. } => {
                    self.held.remove(&id);
                    let Some(item) = view.item(id) else { continue };
                    if !self.store.claim_item(id, self.me.key())? {
                        planner.lost();
                        continue;
                    }
                    match action {
                        Action::ToLane { remote, .. } => claimed.lanes.push((item.clone(), remote)),
                        _ => claimed.here.push(item.clone()),
                    }
                }
                Action::Refuse { item, reason } => {
                    if let Some(item) = view.item(item) {
                        self.refuse(item, QueueState::Refused, reason, events)?;
                    }
                }
                Action::WakeAt(at) => wake = Some(at),
                Action::Held { item, why } => {
                    // Told once, and again only when why changes.
                    if self.held.get(&item) != Some(&why) {
                        if let Some(queued) = view.item(item) {
                            events.event(FleetEvent::Held {
                                slug: queued.slug.clone(),
                                reason: why.clone(),
                            });
                        }
                        self.held.insert(item, why);
                    }
                }
            }
        }
        self.load = planner.load();
        Ok((claimed, wake))
    }

    /// Delivers what was claimed: an item of a fleet with a remote by the remote's lane, off
    /// this loop (a silent remote holds its lane only), the others a few at a time on threads
    /// (each a `start` or `fix` that makes a worktree, records the round and spawns its host);
    /// then records how each of these went. Returns the time the deliveries took.
    pub(super) fn deliver_claimed(
        &mut self,
        claimed: Claimed,
        events: &mut dyn FleetEvents,
    ) -> Result<Duration> {
        let started = Instant::now();
        for (item, remote) in claimed.lanes {
            self.in_lanes.insert(item.id);
            self.lanes.deliver(&remote, item);
        }
        let mut results: Vec<(&QueueItem, Delivery)> = Vec::with_capacity(claimed.here.len());
        for chunk in claimed.here.chunks(PARALLEL_DELIVERIES) {
            let ws = self.ws;
            let delivered: Vec<Delivery> = std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|item| {
                        scope.spawn(move || match ws.open_store() {
                            Ok(store) => deliver(ws, &*store, item, &mut |_: Notice| {}),
                            Err(e) => Delivery::Unavailable(e.message),
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Delivery::Refused("the delivery panicked".to_owned())
                        })
                    })
                    .collect()
            });
            results.extend(chunk.iter().zip(delivered));
        }
        let delivering = started.elapsed();
        if crate::base::faults::fails("scheduler-recording-deliveries") {
            // As a database that went away under the pass: its deliveries stay `delivering`.
            return Err(crate::base::error::EngineError::environment(
                "the store went away (a fault injected by a test)",
                std::io::Error::from(std::io::ErrorKind::ConnectionReset),
            ));
        }
        for (item, delivery) in results {
            self.record_delivery(item, delivery, events)?;
        }
        Ok(delivering)
    }

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
                mark_delivered(&mut *self.store, item, round.number)?;
                self.started(&task, &round, events);
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

    /// Counts and tells a round this scheduler started, and watches its claim, so that its
    /// end wakes the next pass.
    pub(super) fn started(
        &mut self,
        task: &ganger_store::Task,
        round: &ganger_store::Round,
        events: &mut dyn FleetEvents,
    ) {
        self.watch(round.claim.clone());
        self.totals.started += 1;
        events.event(FleetEvent::Started {
            slug: task.slug.clone(),
            round: round.number,
            agent: task.agent.clone(),
            model: round.model.clone(),
        });
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
