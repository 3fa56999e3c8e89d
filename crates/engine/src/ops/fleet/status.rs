//! `ganger fleet status`: a fleet's tasks with their queue state and their task's last
//! round, and the models paused now. Read in a few whole-table queries joined in memory, so
//! that its cost grows with the queue, not with its square.

use super::scheduler::{conflict_hold, conflict_pairs};
use crate::base::config::ConflictPolicy;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_events::RoundStatus;
use ganger_store::{Backend, ModelPause, QueueItem, QueueKind, QueueState, TaskSummary, now_ms};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// `ganger.fleet-status/1` (docs/json.md).
#[derive(Debug, Clone, Serialize)]
pub struct FleetStatus {
    pub schema: &'static str,
    pub fleet: Option<String>,
    pub tasks: Vec<FleetTaskStatus>,
    pub paused: Vec<ModelPause>,
    /// The scheduler's pid when one runs (`ganger serve` or `fleet run`).
    pub scheduler: Option<u32>,
}

/// One task of a fleet (its last queue item).
#[derive(Debug, Clone, Serialize)]
pub struct FleetTaskStatus {
    pub slug: String,
    pub kind: String,
    /// The queue item's state: queued, delivering, delivered, ended, refused, stale.
    pub queue: String,
    pub reason: Option<String>,
    /// Why a queued round waits when the scheduler holds it: its task's work is predicted to
    /// conflict with active tasks' (`[fleet] conflicts = "serialize"`).
    pub waits: Option<String>,
    pub after: Vec<String>,
    /// The task's rounds and its last round's status, once it exists.
    pub rounds: u32,
    pub last_status: Option<String>,
    /// The `DONE:` line of the task's last round that gave one.
    pub done: Option<String>,
}

impl FleetStatus {
    /// Whether nothing of it is still to do.
    pub fn drained(&self) -> bool {
        self.tasks
            .iter()
            .all(|t| QueueState::parse(&t.queue).is_none_or(|s| !s.is_open()))
    }
}

/// The status of fleet `name` (every queued item's task without a name).
pub fn fleet_status(ws: &Workspace, name: Option<&str>) -> Result<FleetStatus> {
    let Some(store) = ws.existing_store()? else {
        return Err(EngineError::invalid(
            "nothing was queued in this repository",
        ));
    };
    if let Some(name) = name
        && !store.fleets()?.iter().any(|f| f.name == name)
    {
        return Err(EngineError::not_found(format!("no fleet {name}"))
            .hint("submit it with `ganger fleet submit FILE.toml`"));
    }
    // One read of each table, then maps: a fleet of 100,000 items is read in one pass, not
    // a lookup of its task and rounds per item (and a search of the table built so far).
    let items = store.queue_items(name)?;
    let task_rows: HashMap<String, TaskSummary> = store
        .task_summaries()?
        .into_iter()
        .map(|t| (t.slug.clone(), t))
        .collect();
    let mut done = store.done_lines()?;
    let holds = match ws.config.fleet.conflicts {
        ConflictPolicy::Serialize => Some(Holds::read(&*store, &items, &task_rows)?),
        ConflictPolicy::Warn => None,
    };
    let mut tasks: Vec<FleetTaskStatus> = Vec::new();
    let mut row_of: HashMap<String, usize> = HashMap::new();
    for item in items {
        let task = task_rows.get(&item.slug);
        let waits = holds.as_ref().and_then(|holds| holds.of(&item));
        let status = FleetTaskStatus {
            waits,
            kind: item.kind.as_str().to_owned(),
            queue: item.state.as_str().to_owned(),
            reason: item.reason,
            after: item.after,
            rounds: task.map_or(0, |t| t.rounds),
            last_status: task
                .and_then(|t| t.last_status)
                .map(|s| s.as_str().to_owned()),
            done: None,
            slug: item.slug,
        };
        // The last item of a task speaks for it, in the place of its first.
        match row_of.get(&status.slug) {
            Some(&row) => tasks[row] = status,
            None => {
                row_of.insert(status.slug.clone(), tasks.len());
                tasks.push(status);
            }
        }
    }
    for task in &mut tasks {
        task.done = done.remove(&task.slug);
    }
    let now = now_ms();
    Ok(FleetStatus {
        schema: "ganger.fleet-status/1",
        fleet: name.map(str::to_owned),
        tasks,
        paused: store
            .model_pauses()?
            .into_iter()
            .filter(|p| p.until > now)
            .collect(),
        scheduler: super::serve_lock::serve_holder(ws),
    })
}

/// What tells a queued round held apart from conflicting work (`serialize`): the pairs of
/// tasks predicted to conflict, and the active tasks as the scheduler counts them.
struct Holds {
    conflicts: BTreeMap<String, BTreeSet<String>>,
    active: BTreeSet<String>,
    landing: BTreeSet<String>,
}

impl Holds {
    fn read(
        store: &dyn Backend,
        items: &[QueueItem],
        tasks: &HashMap<String, TaskSummary>,
    ) -> Result<Holds> {
        let conflicts = conflict_pairs(store)?;
        let landing: BTreeSet<String> = store
            .land_items(true)?
            .into_iter()
            .map(|item| item.slug)
            .collect();
        let mut active = landing.clone();
        active.extend(
            tasks
                .values()
                .filter(|t| t.last_status == Some(RoundStatus::Running))
                .map(|t| t.slug.clone()),
        );
        active.extend(
            items
                .iter()
                .filter(|i| matches!(i.state, QueueState::Delivering | QueueState::Delivered))
                .map(|i| i.slug.clone()),
        );
        Ok(Holds {
            conflicts,
            active,
            landing,
        })
    }

    /// Why `item` waits, when it is a queued fix or broadcast held apart.
    fn of(&self, item: &QueueItem) -> Option<String> {
        if item.state != QueueState::Queued || item.kind == QueueKind::Start {
            return None;
        }
        conflict_hold(self.conflicts.get(&item.slug), &self.active, &self.landing)
    }
}
