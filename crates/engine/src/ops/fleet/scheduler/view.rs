//! The view a pass decides from: one read of the rounds running, the items in flight, the
//! models' pauses and the limits (the scheduler's own and each fleet's), and the queue, a page
//! at a time. It is plain data, so that the plan is a function of it and is tested as tables.
//! What the plan finds missing as it walks the queue (the next page, a queued fix's task, the
//! state of a task an item comes after, a task's fleet) it asks for by a [`Need`], and
//! [`View::learn`] reads it from the store: a pass reads only what its decisions use, once.

use crate::base::error::Result;
use crate::ops::fleet::limits::Limits;
use crate::ops::fleet::offer::Offer;
use crate::task::rules::Inbound;
use ganger_events::{RoundStatus, SandboxKind};
use ganger_store::{Backend, FleetRecord, QueueItem, QueueState, RaceRecord, Round, Task};
use std::collections::{BTreeMap, BTreeSet};

/// How many queued items a pass reads at a time: with a thousand queued, a pass that can start
/// a few rounds reads a page, not a thousand.
const QUEUED_PAGE: u32 = 64;

/// What a pass knows when it decides.
#[derive(Debug, Clone, Default)]
pub(super) struct View {
    /// Now (Unix ms).
    pub now: i64,
    /// The scheduler's limits.
    pub limits: Limits,
    /// Each fleet's own limits, by the fleet's name.
    pub fleet_limits: BTreeMap<String, Limits>,
    /// Each fleet's remote, by the fleet's name (fleets without one are not here).
    pub remotes: BTreeMap<String, String>,
    /// Models paused after a rate limit, until when (Unix ms); a pause may have ended.
    pub pauses: BTreeMap<String, i64>,
    /// The rounds running now, whoever started them.
    pub running: Vec<RunningRound>,
    /// The items some scheduler is delivering or has delivered, but for those this scheduler
    /// found ended in this pass.
    pub in_flight: Vec<InFlight>,
    /// What this scheduler offers, when it is a worker.
    pub offer: Option<Offer>,
    /// What a queued start runs when it names nothing.
    pub defaults: Defaults,
    /// The queued items read so far, oldest first.
    pub queued: Vec<QueueItem>,
    /// Whether `queued` holds every queued item (the last page was read).
    pub queue_read: bool,
    /// The tasks of queued fixes and broadcasts, by slug (`None`: there is no such task).
    pub tasks: BTreeMap<String, Option<QueuedTask>>,
    /// The fleet each task belongs to, by the task's slug.
    pub task_fleets: BTreeMap<String, Option<String>>,
    /// The tasks queued items come after, by slug.
    pub after: BTreeMap<String, After>,
    /// Whether a queued round of a task whose work conflicts with an active task's waits
    /// (`[fleet] conflicts = "serialize"`).
    pub serialize: bool,
    /// With `serialize`: the tasks each task's work is predicted to conflict with, both ways
    /// (a conflict with a base is not here).
    pub conflicts: BTreeMap<String, BTreeSet<String>>,
    /// With `serialize`: the tasks queued to land or in a batch under test.
    pub landing: BTreeSet<String>,
}

/// A running round, as the limits count it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RunningRound {
    pub slug: String,
    pub agent: String,
    pub model: Option<String>,
}

/// An item being delivered or delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct InFlight {
    pub slug: String,
    /// Being delivered (`delivering`), rather than delivered.
    pub delivering: bool,
    /// Claimed by this scheduler.
    pub mine: bool,
}

/// `ganger.toml`'s defaults for a start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Defaults {
    pub agent: String,
    pub model: Option<String>,
    /// `None`: `sandbox.default` names no sandbox there is.
    pub sandbox: Option<SandboxKind>,
}

/// What the plan reads of a queued fix's or broadcast's task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct QueuedTask {
    pub id: i64,
    pub agent: String,
    pub model: Option<String>,
    pub sandbox: SandboxKind,
    pub inbound: Inbound,
}

/// A task a queued item comes after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    /// An open item is queued for it (or being delivered).
    Open,
    /// There is no such task (and nothing open for it).
    NoTask,
    /// Its last round's status (`None`: it had none).
    Last(Option<RoundStatus>),
}

/// Something the view lacks that a decision needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Need {
    /// The next page of the queue.
    Page,
    /// The task of a queued fix or broadcast, by slug.
    Task(String),
    /// The fleet of a task (known) whose item is delivered, by slug.
    TaskFleet(String),
    /// The state of a task queued items come after, by slug.
    After(String),
}

impl View {
    /// The view of a pass, but for what the scheduler brings itself (its limits, its offer and
    /// the defaults): from the rounds running, the fleets and the items in flight the pass has
    /// read, and the models' pauses. `me` is the scheduler's claim's key.
    pub(super) fn read(
        store: &dyn Backend,
        running: &[(Task, Round)],
        fleets: &[FleetRecord],
        in_flight: &[QueueItem],
        me: &str,
    ) -> Result<View> {
        let now = ganger_store::now_ms();
        let pauses = store
            .model_pauses()?
            .into_iter()
            .map(|p| (p.model, p.until))
            .collect();
        Ok(View {
            now,
            fleet_limits: fleets
                .iter()
                .filter_map(|f| {
                    Some((
                        f.name.clone(),
                        serde_json::from_value(f.limits.clone()).ok()?,
                    ))
                })
                .collect(),
            remotes: remotes(fleets),
            pauses,
            running: running
                .iter()
                .map(|(task, round)| RunningRound {
                    slug: task.slug.clone(),
                    agent: task.agent.clone(),
                    model: round.model.clone(),
                })
                .collect(),
            in_flight: in_flight
                .iter()
                .map(|item| InFlight {
                    slug: item.slug.clone(),
                    delivering: item.state == QueueState::Delivering,
                    mine: item.claimed_by.as_deref() == Some(me),
                })
                .collect(),
            ..View::default()
        })
    }

    /// Reads what the plan needs.
    pub(super) fn learn(&mut self, store: &dyn Backend, need: Need) -> Result<()> {
        match need {
            Need::Page => {
                let after_id = self.queued.last().map_or(0, |item| item.id);
                let page = store.items_in(&[QueueState::Queued], after_id, QUEUED_PAGE)?;
                self.queue_read = page.len() < QUEUED_PAGE as usize;
                self.queued.extend(page);
            }
            Need::Task(slug) => {
                let task = store.task(&slug)?.map(|task| QueuedTask::of(&task));
                self.tasks.insert(slug, task);
            }
            Need::TaskFleet(slug) => {
                let fleet = match self.tasks.get(&slug) {
                    Some(Some(task)) => store.task_fleet(task.id)?,
                    _ => None,
                };
                self.task_fleets.insert(slug, fleet);
            }
            Need::After(slug) => {
                let state = if store.slug_is_open(&slug)? {
                    After::Open
                } else if let Some(race) = store.race(&slug)? {
                    race_after(&race)
                } else {
                    match store.task(&slug)? {
                        Some(task) => After::Last(task.last_status),
                        None => After::NoTask,
                    }
                };
                self.after.insert(slug, state);
            }
        }
        Ok(())
    }

    /// Reads what holding conflicting tasks apart needs (`[fleet] conflicts = "serialize"`):
    /// the pairs of tasks predicted to conflict and the tasks queued to land.
    pub(super) fn read_conflicts(&mut self, store: &dyn Backend) -> Result<()> {
        self.serialize = true;
        self.conflicts = conflict_pairs(store)?;
        self.landing = store
            .land_items(true)?
            .into_iter()
            .map(|item| item.slug)
            .collect();
        Ok(())
    }

    /// The queued item `id`, read in this pass.
    pub(super) fn item(&self, id: i64) -> Option<&QueueItem> {
        self.queued.iter().find(|item| item.id == id)
    }
}

/// A race an item comes after, read as a task's state: running until it has ended, then
/// `done` when it has a winner and `failed` when it has none, so that a task after a race
/// waits for its winner and is refused as after a failed task ("which ended failed").
fn race_after(race: &RaceRecord) -> After {
    match race.status.as_str() {
        "running" => After::Open,
        "won" => After::Last(Some(RoundStatus::Done)),
        _ => After::Last(Some(RoundStatus::Failed)),
    }
}

/// The tasks each task's work is predicted to conflict with, both ways (a conflict with a
/// base is not here).
pub(crate) fn conflict_pairs(store: &dyn Backend) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let mut conflicts: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for pair in store.conflicts()?.into_iter().filter(|p| !p.with_base) {
        conflicts
            .entry(pair.task.clone())
            .or_default()
            .insert(pair.other.clone());
        conflicts.entry(pair.other).or_default().insert(pair.task);
    }
    Ok(conflicts)
}

/// Each fleet's remote, by the fleet's name.
pub(super) fn remotes(fleets: &[FleetRecord]) -> BTreeMap<String, String> {
    fleets
        .iter()
        .filter_map(|f| Some((f.name.clone(), f.remote.clone()?)))
        .collect()
}

impl QueuedTask {
    fn of(task: &Task) -> QueuedTask {
        QueuedTask {
            id: task.id,
            agent: task.agent.clone(),
            model: task.model.clone(),
            sandbox: task.sandbox,
            inbound: Inbound::of(task),
        }
    }
}
