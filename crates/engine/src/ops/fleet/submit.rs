//! `fleet submit|run`: a fleet file's tasks into the queue. What each task needs is decided
//! from the store (start it, continue an interrupted one, leave a pending or finished one
//! alone); the store then writes the whole submission in one transaction that checks it
//! again: a slug that another fleet's task (or a task of no fleet) has refuses the fleet with
//! nothing written, and a task that a concurrent submission queued in the meantime is left to
//! it, so that three `fleet run`s of one file at once queue each task once.

use super::enqueue::Item;
use super::file::{Fleet, FleetTask};
use super::spec::CONTINUE;
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::task::admission::known_adapter;
use ganger_events::RoundStatus;
use ganger_store::{
    Backend, Budget, FleetItem, FleetRecord, FleetSubmission, QueueKind, QueueState, SlugHolder,
    StoreError, now_ms,
};
use std::collections::HashSet;

/// What submitting a fleet did with each task.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Submitted {
    /// Tasks queued to start.
    pub started: Vec<String>,
    /// Tasks whose last round was interrupted, queued to continue in their sessions.
    pub resumed: Vec<String>,
    /// Tasks already queued or running, left as they are.
    pub pending: Vec<String>,
    /// Tasks that have finished (done, failed, ...), skipped; a race that ended too.
    pub finished: Vec<String>,
    /// Races (`attempts = "SPEC"`) recorded or found running, each driven in the background
    /// (its attempts are among the tasks above).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub races: Vec<String>,
}

/// Marks `ended` the delivered items whose round has ended while no scheduler looked (it was
/// killed, or stopped), so that a task interrupted then is resumed, not taken for pending.
/// Only while no scheduler runs: a live one reviews its rounds' ends itself (a rate limit
/// pauses the model and requeues the task), and ending its items here would skip that.
fn end_finished_deliveries(ws: &Workspace, store: &mut dyn Backend) -> Result<()> {
    if super::serve_lock::serve_holder(ws).is_some() {
        return Ok(());
    }
    for item in store.open_items()? {
        if item.state != QueueState::Delivered {
            continue;
        }
        let Some(task) = store.task(&item.slug)? else {
            continue;
        };
        let Some(round) = store.round(task.id, item.round)? else {
            continue;
        };
        if round.status != RoundStatus::Running {
            super::scheduler::mark_ended(store, &item, Some(round.status))?;
        }
    }
    Ok(())
}

/// The refusal of a fleet that names a slug someone else holds.
fn conflict(fleet: &Fleet, slug: String, holder: Option<String>) -> EngineError {
    EngineError::from(StoreError::FleetConflict {
        slug,
        fleet: fleet.name.clone(),
        holder,
    })
    .hint(format!(
        "a slug names one task in a repository: give this one another slug in {}",
        fleet.file.display()
    ))
}

fn holder_fleet(holder: SlugHolder) -> Option<String> {
    match holder {
        SlugHolder::Fleet(name) => Some(name),
        SlugHolder::Free | SlugHolder::NoFleet => None,
    }
}

/// A task to queue, as decided from the store: the item and the task's rounds then.
type Planned<'a> = (Item<'a>, Option<u32>);

/// What each of the fleet's tasks needs: to start, to continue an interrupted round, or
/// nothing (pending: queued or running; finished).
fn plan<'a>(
    store: &dyn Backend,
    fleet: &'a Fleet,
    commander: &str,
    submitted: &mut Submitted,
) -> Result<Vec<Planned<'a>>> {
    let open: HashSet<String> = store
        .open_items()?
        .into_iter()
        .map(|item| item.slug)
        .collect();
    let queued: HashSet<String> = store
        .queue_items(Some(&fleet.name))?
        .into_iter()
        .map(|item| item.slug)
        .collect();
    let mut planned = Vec::new();
    for (task, slug, options) in entries(store, fleet, submitted)? {
        if open.contains(slug) {
            submitted.pending.push(slug.to_owned());
            continue;
        }
        // A running race's attempt queued before (a withdrawn one too) is its driver's.
        if task.race.is_some() && queued.contains(slug) {
            submitted.pending.push(slug.to_owned());
            continue;
        }
        let existing = store.task(slug)?;
        let (kind, prompt, generation) = match &existing {
            None => (QueueKind::Start, task.prompt.as_str(), None),
            Some(found) => match found.last_status {
                Some(RoundStatus::Interrupted) => {
                    (QueueKind::Fix, CONTINUE, Some(found.generation))
                }
                Some(RoundStatus::Running) => {
                    submitted.pending.push(slug.to_owned());
                    continue;
                }
                None if found.rounds == 0 => (QueueKind::Fix, task.prompt.as_str(), None),
                _ => {
                    submitted.finished.push(slug.to_owned());
                    continue;
                }
            },
        };
        let item = Item {
            slug,
            kind,
            prompt,
            options: options.clone(),
            commander: commander.to_owned(),
            generation,
            fleet: Some(fleet.name.clone()),
            after: task.after.clone(),
        };
        planned.push((item, existing.map(|t| t.rounds)));
    }
    Ok(planned)
}

/// Each task to queue with its slug and options: a plain task itself, a running race's
/// attempts (a race that ended is finished, its attempts left alone).
fn entries<'a>(
    store: &dyn Backend,
    fleet: &'a Fleet,
    submitted: &mut Submitted,
) -> Result<Vec<(&'a FleetTask, &'a str, &'a serde_json::Value)>> {
    let mut entries = Vec::new();
    for task in &fleet.tasks {
        let Some(race) = &task.race else {
            entries.push((task, task.slug.as_str(), &task.options));
            continue;
        };
        if store
            .race(&task.slug)?
            .is_some_and(|r| r.status != "running")
        {
            submitted.finished.push(task.slug.clone());
            continue;
        }
        submitted.races.push(task.slug.clone());
        for attempt in &race.attempts {
            entries.push((task, attempt.slug.as_str(), &attempt.options));
        }
    }
    Ok(entries)
}

/// The planned items as the store takes them, each with its prompt.
fn fleet_items(planned: Vec<Planned<'_>>) -> Vec<FleetItem> {
    planned
        .into_iter()
        .map(|(item, rounds)| FleetItem {
            item: item.new_queued(),
            rounds,
        })
        .collect()
}

/// Queues a fleet: each task not yet started is queued to start, each interrupted one to
/// continue, the others are left alone, so that submitting the same file again resumes it.
pub fn submit_fleet(ws: &Workspace, fleet: &Fleet, as_name: Option<&str>) -> Result<Submitted> {
    if let Some(remote) = &fleet.remote {
        super::remote::check_fleet_remote(ws, &fleet.name, remote)?;
    }
    // Read only if it exists: bad input makes nothing, not even the store.
    let existing = ws.existing_store()?;
    for task in &fleet.tasks {
        if let Some(race) = &task.race {
            let store = existing.as_deref();
            super::race_task::check(ws, store, &task.slug, race, &task.options)?;
            continue;
        }
        let agent = task.options["agent"]
            .as_str()
            .map_or_else(|| ws.config.defaults.agent.clone(), str::to_owned);
        known_adapter(ws, &agent)?;
        // A base reaches git only once checked, here before anything is queued.
        if let Some(base) = task.options["base"].as_str() {
            crate::evidence::task_worktree::base_commit(ws, base)
                .map_err(|e| EngineError::invalid(format!("task {}: {}", task.slug, e.message)))?;
        }
    }
    let limits = serde_json::to_value(&fleet.limits)
        .map_err(|e| EngineError::environment("failed to encode the fleet's limits", e))?;
    drop(existing);
    let mut store = ws.open_store()?;
    let slugs: Vec<String> = fleet.tasks.iter().flat_map(task_slugs).collect();
    // Refused before anything is written; the store checks again as it writes.
    if let Some((slug, holder)) = store.fleet_conflict(&fleet.name, &slugs)? {
        return Err(conflict(fleet, slug, holder_fleet(holder)));
    }
    crate::round::reaper::settle_running(
        ws,
        &mut *store,
        &mut |_: crate::base::notice::Notice| {},
    )?;
    end_finished_deliveries(ws, &mut *store)?;
    let owner = commander(as_name);
    record_races(&mut *store, fleet, &owner)?;
    let mut submitted = Submitted::default();
    let planned = plan(&*store, fleet, &owner, &mut submitted)?;
    let submission = FleetSubmission {
        fleet: FleetRecord {
            name: fleet.name.clone(),
            file: Some(fleet.file.to_string_lossy().into_owned()),
            limits,
            remote: fleet.remote.clone(),
            created_at: now_ms(),
        },
        budget: (fleet.budget.usd.is_some() || fleet.budget.tokens.is_some()).then_some(Budget {
            usd: fleet.budget.usd,
            tokens: fleet.budget.tokens,
        }),
        slugs,
        items: fleet_items(planned),
    };
    crate::base::faults::pause("before-submit-fleet");
    let queued = store.submit_fleet(&submission).map_err(|e| match e {
        StoreError::FleetConflict { slug, holder, .. } => conflict(fleet, slug, holder),
        other => other.into(),
    })?;
    for (wanted, queued) in submission.items.iter().zip(queued) {
        let slug = wanted.item.slug.clone();
        match (queued, wanted.item.kind) {
            (Some(_), QueueKind::Start) => submitted.started.push(slug),
            (Some(_), _) => submitted.resumed.push(slug),
            // Another submission queued it, or it started since: left to that one.
            (None, _) => submitted.pending.push(slug),
        }
    }
    super::race_task::drive(ws, &submitted.races)?;
    Ok(submitted)
}

/// The slugs a task holds: its own, or a race's attempts'.
fn task_slugs(task: &FleetTask) -> Vec<String> {
    match &task.race {
        Some(race) => race.attempts.iter().map(|a| a.slug.clone()).collect(),
        None => vec![task.slug.clone()],
    }
}

/// Records each race of the fleet not recorded yet (before its attempts are queued: a race
/// is never without its record).
fn record_races(store: &mut dyn Backend, fleet: &Fleet, owner: &str) -> Result<()> {
    for task in &fleet.tasks {
        if let Some(race) = &task.race
            && store.race(&task.slug)?.is_none()
        {
            let asked = (race, task.prompt.as_str(), &task.options);
            super::race_task::record(store, &fleet.name, &task.slug, asked, owner)?;
        }
    }
    Ok(())
}
