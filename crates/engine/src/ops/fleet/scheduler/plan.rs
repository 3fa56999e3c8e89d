//! The scheduler's decisions, pure: over a [`View`], which queued items a pass claims (and
//! whether each is delivered here or by the lane of its fleet's remote), which it refuses, and
//! when the next pass is due. Nothing here reads the store or the clock. What the view lacks,
//! the walk asks for ([`Action::Read`]) at the point where a decision needs it, and goes on
//! once the view has it; the executor carries the other actions out as they come.
//!
//! The queue is walked oldest first, and each item meets these rules in this order:
//! - one round per task: an item waits while its task has a running round or an item in
//!   flight, or behind an older queued item of its task (queue order per task);
//! - an item not due yet (`not_before`) waits, and the next pass is due when it is;
//! - once the global limit is reached, the walk ends;
//! - an item on a paused model waits (the next pass is due when the pause ends);
//! - a worker's walk ends at its capacity, and it leaves the items of agents or sandboxes it
//!   does not offer to other workers;
//! - an item waits while a limit per agent or per model (the scheduler's, or its fleet's own)
//!   is reached;
//! - an item waits while its task's rules hold inbound rounds;
//! - with `[fleet] conflicts = "serialize"`, a fix or broadcast waits while its task's work
//!   is predicted to conflict with an active task's: one with a round running, an item in
//!   flight or claimed earlier in this pass, or queued to land (until it has landed, which
//!   clears the pair). A task whose work only sits there is not waited for, so two such
//!   tasks never hold each other;
//! - an item waits until the tasks it comes after (`after`) have ended `done`, and is refused
//!   once one ended otherwise;
//! - else it is claimed, counted at once against the limits and the capacity, and delivered
//!   here, or handed to the lane of its fleet's remote.

use super::view::{After, Need, QueuedTask, View};
use crate::ops::fleet::limits::{Limits, Running};
use crate::ops::fleet::spec::StartSpec;
use crate::task::rules::Inbound;
use ganger_events::{RoundStatus, SandboxKind};
use ganger_store::{QueueItem, QueueKind};
use std::collections::BTreeSet;

/// What the executor does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Action {
    /// Read this into the view; the walk goes on from where it stopped.
    Read(Need),
    /// Claim the item and deliver it here.
    Deliver(i64),
    /// Claim the item and hand it to the lane of its fleet's remote.
    ToLane { item: i64, remote: String },
    /// Refuse the item for good.
    Refuse { item: i64, reason: String },
    /// The next pass is due by this time (Unix ms): a pause ends, or an item comes due.
    WakeAt(i64),
    /// The item waits for the active tasks its task's work is predicted to conflict with
    /// (`[fleet] conflicts = "serialize"`): why, as [`conflict_hold`] says it.
    Held { item: i64, why: String },
}

/// The walk of one pass over the queue: what it has decided so far.
#[derive(Debug, Clone)]
pub(super) struct Planner {
    /// The rounds running, and those claimed in this pass.
    running: Running,
    /// This scheduler's rounds (being delivered, or delivered and running), and those it
    /// claimed in this pass.
    load: usize,
    /// Tasks that take no more items in this pass.
    blocked: BTreeSet<String>,
    /// Tasks a conflicting task's queued round waits for (with `serialize`): those running,
    /// in flight, claimed in this pass or queued to land.
    active: BTreeSet<String>,
    /// When the next pass is due at the latest (Unix ms).
    wake: Option<i64>,
    /// The next item of the view's queue to decide on.
    at: usize,
    /// Nothing more fits in this pass (the global limit, or the worker's capacity).
    full: bool,
    /// The walk is over and its wake was told.
    done: bool,
    /// The counts before the last claim, until the next decision.
    before_claim: Option<(Running, usize)>,
}

/// What becomes of one queued item.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    /// Its task takes no more items in this pass.
    Blocked,
    /// Not due yet.
    NotDue,
    /// Nothing more fits in this pass.
    Full,
    /// Not now.
    Waits,
    /// Not while the tasks its task's work conflicts with are active: why.
    Held(String),
    Refuse(String),
    Claim {
        agent: String,
        model: Option<String>,
        remote: Option<String>,
    },
}

/// The agent, model and sandbox a queued item's round would use.
struct Wants {
    agent: String,
    model: Option<String>,
    /// `None`: a start's options name no sandbox there is (no worker runs it).
    sandbox: Option<SandboxKind>,
}

impl Planner {
    /// A walk over `view`'s queue from its oldest item, with the rounds running and the items
    /// in flight counted.
    pub(super) fn new(view: &View) -> Planner {
        let mut running = Running::default();
        let mut busy = BTreeSet::new();
        for round in &view.running {
            running.add(&round.agent, round.model.as_deref());
            busy.insert(round.slug.clone());
        }
        // What this scheduler runs: what it is delivering, and its rounds still running.
        let load = view
            .in_flight
            .iter()
            .filter(|item| item.mine && (item.delivering || busy.contains(&item.slug)))
            .count();
        let mut blocked = busy;
        blocked.extend(view.in_flight.iter().map(|item| item.slug.clone()));
        let mut active = blocked.clone();
        active.extend(view.landing.iter().cloned());
        let wake = view
            .pauses
            .values()
            .filter(|until| **until > view.now)
            .min()
            .copied();
        Planner {
            running,
            load,
            blocked,
            active,
            wake,
            at: 0,
            full: false,
            done: false,
            before_claim: None,
        }
    }

    /// The next action, or `None` once the walk is over. After an [`Action::Read`], the view
    /// is to have what it asked for; after a claim, [`Planner::lost`] says it was not won.
    pub(super) fn next(&mut self, view: &View) -> Option<Action> {
        while !self.done {
            if self.full || (self.at == view.queued.len() && view.queue_read) {
                self.done = true;
                return self.wake.map(Action::WakeAt);
            }
            let Some(item) = view.queued.get(self.at) else {
                return Some(Action::Read(Need::Page));
            };
            let decision = match self.decide(view, item) {
                Ok(decision) => decision,
                Err(need) => return Some(Action::Read(need)),
            };
            self.at += 1;
            self.before_claim = None;
            if let Some(action) = self.apply(item, decision) {
                return Some(action);
            }
        }
        None
    }

    /// The claim just asked for went to another scheduler: it counts for nothing (its task
    /// still takes no other item in this pass).
    pub(super) fn lost(&mut self) {
        if let Some((running, load)) = self.before_claim.take() {
            self.running = running;
            self.load = load;
        }
    }

    /// This scheduler's rounds, with those claimed in this pass.
    pub(super) fn load(&self) -> usize {
        self.load
    }

    /// What becomes of `item`, or what the view must read first. Changes nothing: a walk
    /// that stopped for a read decides on the same item again.
    fn decide(&self, view: &View, item: &QueueItem) -> Result<Decision, Need> {
        if self.blocked.contains(&item.slug) {
            return Ok(Decision::Blocked);
        }
        if item.not_before > view.now {
            return Ok(Decision::NotDue);
        }
        // The checks that need no reading first: with hundreds queued, most wait on a limit.
        if view.limits.global.is_some_and(|g| self.running.total >= g) {
            return Ok(Decision::Full);
        }
        let task = match item.kind {
            QueueKind::Start => None,
            QueueKind::Fix | QueueKind::Broadcast => match view.tasks.get(&item.slug) {
                Some(task) => task.as_ref(),
                None => return Err(Need::Task(item.slug.clone())),
            },
        };
        let wants = wants(view, item, task);
        if wants.model.as_deref().is_some_and(|m| paused(view, m)) {
            return Ok(Decision::Waits);
        }
        if let Some(offer) = &view.offer {
            if self.load >= offer.capacity {
                return Ok(Decision::Full);
            }
            // An agent or a sandbox this worker lacks: left for another worker.
            if !offer.runs(&wants.agent, wants.sandbox) {
                return Ok(Decision::Waits);
            }
        }
        let fits =
            |limits: &Limits| limits.allow(&self.running, &wants.agent, wants.model.as_deref());
        let fleet = item.fleet.as_ref().and_then(|f| view.fleet_limits.get(f));
        if !fits(&view.limits) || fleet.is_some_and(|limits| !fits(limits)) {
            return Ok(Decision::Waits);
        }
        if task.is_some_and(|t| t.inbound == Inbound::Hold) {
            return Ok(Decision::Waits);
        }
        if task.is_some()
            && view.serialize
            && let Some(why) =
                conflict_hold(view.conflicts.get(&item.slug), &self.active, &view.landing)
        {
            return Ok(Decision::Held(why));
        }
        match dependencies(view, item)? {
            Deps::Wait => return Ok(Decision::Waits),
            Deps::Failed(reason) => return Ok(Decision::Refuse(reason)),
            Deps::Done => {}
        }
        Ok(Decision::Claim {
            remote: remote(view, item, task)?,
            agent: wants.agent,
            model: wants.model,
        })
    }

    /// Records the decision on `item`; the action it asks of the executor, if any.
    fn apply(&mut self, item: &QueueItem, decision: Decision) -> Option<Action> {
        if decision != Decision::Blocked {
            self.blocked.insert(item.slug.clone());
        }
        match decision {
            Decision::Blocked | Decision::Waits => None,
            Decision::Held(why) => Some(Action::Held { item: item.id, why }),
            Decision::NotDue => {
                let at = item.not_before;
                self.wake = Some(self.wake.map_or(at, |wake| wake.min(at)));
                None
            }
            Decision::Full => {
                self.full = true;
                None
            }
            Decision::Refuse(reason) => Some(Action::Refuse {
                item: item.id,
                reason,
            }),
            Decision::Claim {
                agent,
                model,
                remote,
            } => {
                // Counted now, so the limits hold for the rest of the pass.
                self.before_claim = Some((self.running.clone(), self.load));
                self.active.insert(item.slug.clone());
                self.running.add(&agent, model.as_deref());
                self.load += 1;
                Some(match remote {
                    None => Action::Deliver(item.id),
                    Some(remote) => Action::ToLane {
                        item: item.id,
                        remote,
                    },
                })
            }
        }
    }
}

/// Why a queued round of a task whose work is predicted to conflict with `conflicts` waits,
/// when some of them are `active` (`landing`: queued to land or in a batch under test; the
/// others run, or have a round on its way): `None` when none is. `ganger fleet status` says
/// the same of a queued item.
pub(crate) fn conflict_hold(
    conflicts: Option<&BTreeSet<String>>,
    active: &BTreeSet<String>,
    landing: &BTreeSet<String>,
) -> Option<String> {
    let held_by: Vec<String> = conflicts?
        .intersection(active)
        .map(|other| {
            let state = if landing.contains(other) {
                "landing"
            } else {
                "running"
            };
            format!("{other} ({state})")
        })
        .collect();
    if held_by.is_empty() {
        return None;
    }
    Some(format!(
        "waits for {}: their work is predicted to conflict ([fleet] conflicts = \"serialize\")",
        held_by.join(", ")
    ))
}

/// The actions of a pass over `view`, every claim won, as far as the view goes (to the end
/// of the walk, or to its first read).
#[cfg(test)]
pub(super) fn plan(view: &View) -> Vec<Action> {
    let mut planner = Planner::new(view);
    let mut actions = Vec::new();
    while let Some(action) = planner.next(view) {
        let read = matches!(action, Action::Read(_));
        actions.push(action);
        if read {
            break;
        }
    }
    actions
}

/// What `item`'s round would run: its task's agent, model and sandbox, or for a start, what
/// its options name, else the defaults.
fn wants(view: &View, item: &QueueItem, task: Option<&QueuedTask>) -> Wants {
    if let Some(task) = task {
        return Wants {
            agent: task.agent.clone(),
            model: task.model.clone(),
            sandbox: Some(task.sandbox),
        };
    }
    let spec = StartSpec::from_json(&item.options).unwrap_or_default();
    let defaults = &view.defaults;
    Wants {
        agent: spec.agent.unwrap_or_else(|| defaults.agent.clone()),
        model: spec.model.or_else(|| defaults.model.clone()),
        sandbox: match spec.sandbox {
            Some(word) => word.parse().ok(),
            None => defaults.sandbox,
        },
    }
}

/// Whether new rounds on `model` wait for a pause to end.
fn paused(view: &View, model: &str) -> bool {
    view.pauses
        .get(model)
        .is_some_and(|until| *until > view.now)
}

/// Whether the tasks an item comes after have ended `done`.
enum Deps {
    Done,
    Wait,
    Failed(String),
}

fn dependencies(view: &View, item: &QueueItem) -> Result<Deps, Need> {
    for after in &item.after {
        match view.after.get(after) {
            None => return Err(Need::After(after.clone())),
            Some(After::Open | After::NoTask | After::Last(None | Some(RoundStatus::Running))) => {
                return Ok(Deps::Wait);
            }
            Some(After::Last(Some(RoundStatus::Done))) => {}
            Some(After::Last(Some(other))) => {
                return Ok(Deps::Failed(format!(
                    "it comes after {after}, which ended {}",
                    other.as_str()
                )));
            }
        }
    }
    Ok(Deps::Done)
}

/// The remote whose lane delivers `item`: its fleet's, or for a fix or broadcast queued
/// outside a fleet, the fleet's of its task (a fix queued to a fleet's task by hand).
fn remote(
    view: &View,
    item: &QueueItem,
    task: Option<&QueuedTask>,
) -> Result<Option<String>, Need> {
    if view.remotes.is_empty() {
        return Ok(None);
    }
    let fleet = match (&item.fleet, item.kind, task) {
        (Some(fleet), _, _) => Some(fleet.clone()),
        (None, QueueKind::Start, _) | (None, _, None) => None,
        (None, _, Some(_)) => match view.task_fleets.get(&item.slug) {
            Some(fleet) => fleet.clone(),
            None => return Err(Need::TaskFleet(item.slug.clone())),
        },
    };
    Ok(fleet.and_then(|fleet| view.remotes.get(&fleet).cloned()))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
