//! `fleet submit|run`: a fleet file's tasks into the queue. What each task needs is decided
//! from the store (start it, continue an interrupted one, leave a pending or finished one
//! alone); the store then writes the whole submission in one transaction that checks it
//! again: a slug that another fleet's task (or a task of no fleet) has refuses the fleet with
//! nothing written, and a task that a concurrent submission queued in the meantime is left to
//! it, so that three `fleet run`s of one file at once queue each task once.

use super::enqueue::{Item, write_prompt};
use super::file::Fleet;
use crate::commander::commander;
use crate::error::{EngineError, Result};
use crate::start::known_adapter;
use crate::workspace::Workspace;
use ganger_events::RoundStatus;
use ganger_store::{
    Budget, FleetItem, FleetRecord, FleetSubmission, QueueKind, QueueState, QueueStore, SlugHolder,
    SqliteStore, Store, StoreError, now_ms,
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
    /// Tasks that have finished (done, failed, ...), skipped.
    pub finished: Vec<String>,
}

/// The prompt of a round that continues an interrupted one.
pub const CONTINUE: &str = "continue";

/// Marks `ended` the delivered items whose round has ended while no scheduler looked (it was
/// killed, or stopped), so that a task interrupted then is resumed, not taken for pending.
/// Only while no scheduler runs: a live one reviews its rounds' ends itself (a rate limit
/// pauses the model and requeues the task), and ending its items here would skip that.
fn end_finished_deliveries(ws: &Workspace, store: &mut SqliteStore) -> Result<()> {
    if super::serve::serve_holder(ws).is_some() {
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
            store.move_item(
                item.id,
                QueueState::Delivered,
                QueueState::Ended,
                Some(round.status.as_str()),
                None,
            )?;
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

/// Queues a fleet: each task not yet started is queued to start, each interrupted one to
/// continue, the others are left alone, so that submitting the same file again resumes it.
pub fn submit_fleet(ws: &Workspace, fleet: &Fleet, as_name: Option<&str>) -> Result<Submitted> {
    for task in &fleet.tasks {
        let agent = task.options["agent"]
            .as_str()
            .map_or_else(|| ws.config.defaults.agent.clone(), str::to_owned);
        known_adapter(ws, &agent)?;
    }
    let mut store = ws.open_store()?;
    let slugs: Vec<String> = fleet.tasks.iter().map(|t| t.slug.clone()).collect();
    // Refused before anything is written; the store checks again as it writes.
    if let Some((slug, holder)) = store.fleet_conflict(&fleet.name, &slugs)? {
        return Err(conflict(fleet, slug, holder_fleet(holder)));
    }
    crate::reaper::settle_running(ws, &mut store, &mut |_: crate::notice::Notice| {})?;
    end_finished_deliveries(ws, &mut store)?;
    let open: HashSet<String> = store
        .open_items()?
        .into_iter()
        .map(|item| item.slug)
        .collect();
    let commander = commander(as_name);
    let mut submitted = Submitted::default();
    let mut items: Vec<FleetItem> = Vec::new();
    let mut written = Vec::new();
    let remove_all = |written: &[std::path::PathBuf]| {
        for path in written {
            let _ = std::fs::remove_file(path);
        }
    };
    for task in &fleet.tasks {
        if open.contains(&task.slug) {
            submitted.pending.push(task.slug.clone());
            continue;
        }
        let existing = store.task(&task.slug)?;
        let (kind, prompt, generation) = match &existing {
            None => (QueueKind::Start, task.prompt.as_str(), None),
            Some(found) => match found.last_status {
                Some(RoundStatus::Interrupted) => {
                    (QueueKind::Fix, CONTINUE, Some(found.generation))
                }
                Some(RoundStatus::Running) => {
                    submitted.pending.push(task.slug.clone());
                    continue;
                }
                None if found.rounds == 0 => (QueueKind::Fix, task.prompt.as_str(), None),
                _ => {
                    submitted.finished.push(task.slug.clone());
                    continue;
                }
            },
        };
        let prompt_file = match write_prompt(ws, &task.slug, prompt) {
            Ok(path) => path,
            Err(e) => {
                remove_all(&written);
                return Err(e);
            }
        };
        written.push(prompt_file.clone());
        let item = Item {
            slug: &task.slug,
            kind,
            prompt,
            options: task.options.clone(),
            commander: commander.clone(),
            generation,
            fleet: Some(fleet.name.clone()),
            after: task.after.clone(),
        };
        items.push(FleetItem {
            item: item.new_queued(prompt_file),
            rounds: existing.map(|t| t.rounds),
        });
    }
    let budget = (fleet.budget.usd.is_some() || fleet.budget.tokens.is_some()).then_some(Budget {
        usd: fleet.budget.usd,
        tokens: fleet.budget.tokens,
    });
    let submission = FleetSubmission {
        fleet: FleetRecord {
            name: fleet.name.clone(),
            file: Some(fleet.file.to_string_lossy().into_owned()),
            limits: serde_json::to_value(&fleet.limits)
                .map_err(|e| EngineError::invalid(e.to_string()))?,
            created_at: now_ms(),
        },
        budget,
        slugs,
        items,
    };
    crate::faults::pause("before-submit-fleet");
    let queued = match store.submit_fleet(&submission) {
        Ok(queued) => queued,
        Err(e) => {
            remove_all(&written);
            return Err(match e {
                StoreError::FleetConflict { slug, holder, .. } => conflict(fleet, slug, holder),
                other => other.into(),
            });
        }
    };
    for (wanted, queued) in submission.items.iter().zip(queued) {
        let slug = wanted.item.slug.clone();
        match (queued, wanted.item.kind) {
            (Some(_), QueueKind::Start) => submitted.started.push(slug),
            (Some(_), _) => submitted.resumed.push(slug),
            // Another submission queued it, or it started since: left to that one.
            (None, _) => {
                let _ = std::fs::remove_file(&wanted.item.prompt_file);
                submitted.pending.push(slug);
            }
        }
    }
    Ok(submitted)
}
