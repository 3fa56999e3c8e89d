//! `ganger fleet status`: a fleet's tasks with their queue state and their task's last
//! round, and the models paused now.

use crate::error::{EngineError, Result};
use crate::workspace::Workspace;
use ganger_store::{ModelPause, QueueState, QueueStore, Store, now_ms};
use serde::Serialize;

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
        return Err(EngineError::invalid(format!("no fleet {name}"))
            .hint("submit it with `ganger fleet submit FILE.toml`"));
    }
    let items = store.queue_items(name)?;
    let mut tasks: Vec<FleetTaskStatus> = Vec::new();
    for item in items {
        let task = store.task(&item.slug)?;
        let done = match &task {
            Some(task) => store
                .rounds(task.id)?
                .into_iter()
                .rev()
                .find_map(|r| r.summary.done),
            None => None,
        };
        let status = FleetTaskStatus {
            slug: item.slug.clone(),
            kind: item.kind.as_str().to_owned(),
            queue: item.state.as_str().to_owned(),
            reason: item.reason.clone(),
            after: item.after.clone(),
            rounds: task.as_ref().map_or(0, |t| t.rounds),
            last_status: task
                .as_ref()
                .and_then(|t| t.last_status)
                .map(|s| s.as_str().to_owned()),
            done,
        };
        // The last item of a task speaks for it.
        match tasks.iter_mut().find(|t| t.slug == item.slug) {
            Some(existing) => *existing = status,
            None => tasks.push(status),
        }
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
        scheduler: super::serve::serve_holder(ws),
    })
}
