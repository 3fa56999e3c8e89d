//! The lander that runs beside the scheduler inside `ganger serve` and `ganger worker`: about
//! every second it queues the tasks labelled `land=true` (a fleet file's `land = true`) whose
//! last round passed its checks, then lands the queue of every base no other lander holds,
//! one lander per base through the store's claim, as `ganger land --run` does. Its steps are
//! the journal's (`land-step`, `landed`, ...) and its host's output lines. A base whose own checks
//! fail is left until its head moves; a failure of the environment is tried again later.

use crate::base::error::Result;
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::ops::land::enqueue::enqueue;
use crate::ops::land::lander::land_free_bases;
use crate::ops::land::report::{DEFAULT_BATCH, LandOptions};
use crate::task::labels::LAND_LABEL;
use ganger_store::Backend;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the keeper looks at the queue.
const POLL: Duration = Duration::from_secs(1);

/// How long it waits after a failure of the environment before it looks again.
const TROUBLE_PAUSE: Duration = Duration::from_secs(10);

/// What the keeper remembers between looks.
#[derive(Default)]
struct Memory {
    /// The round of each labelled task that was already queued or refused (not looked at
    /// again until the task has a later round).
    seen: HashMap<String, u32>,
    /// Each base whose own checks failed, and the head they failed on.
    red: HashMap<String, String>,
}

/// Queues and lands until `stop` is set (checked between batches and while it waits); its
/// steps go to `notices` (the daemon's output).
pub fn keep_landing(ws: &Workspace, commander: &str, stop: &AtomicBool, notices: &mut dyn Notices) {
    let mut memory = Memory::default();
    while !stop.load(Ordering::Relaxed) {
        let pause = match look(ws, commander, &mut memory, stop, notices) {
            Ok(()) => POLL,
            Err(_) => TROUBLE_PAUSE,
        };
        let began = Instant::now();
        while began.elapsed() < pause && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// One look: queue what asks to land, then land what is queued.
fn look(
    ws: &Workspace,
    commander: &str,
    memory: &mut Memory,
    stop: &AtomicBool,
    notices: &mut dyn Notices,
) -> Result<()> {
    let Some(store) = ws.existing_store()? else {
        return Ok(());
    };
    queue_labelled(ws, &*store, &mut memory.seen)?;
    let main = ganger_git::discover(&ws.repo.main)?;
    let red = &memory.red;
    let mut skip = |base: &str| {
        red.get(base)
            .is_some_and(|head| main.resolve(&format!("refs/heads/{base}")).as_ref() == Some(head))
    };
    let pass = land_free_bases(ws, DEFAULT_BATCH, commander, notices, &mut skip, stop)?;
    for report in pass.reports.iter().filter(|r| r.outcome == "base-red") {
        memory.red.insert(report.base.clone(), report.head.clone());
    }
    Ok(())
}

/// Queues each task labelled `land=true` whose last round ended done and has not been queued
/// (or refused) yet, by its owner. A task refused (its checks failed, nothing to land) is
/// looked at again only after a later round.
fn queue_labelled(
    ws: &Workspace,
    store: &dyn Backend,
    seen: &mut HashMap<String, u32>,
) -> Result<()> {
    let open: Vec<String> = store
        .land_items(true)?
        .into_iter()
        .map(|item| item.slug)
        .collect();
    for labelled in store.labelled_tasks(LAND_LABEL)? {
        if labelled.value.as_deref() != Some("true")
            || labelled.last_status.as_deref() != Some("done")
            || open.contains(&labelled.slug)
        {
            continue;
        }
        let Some(task) = store.task(&labelled.slug)? else {
            continue;
        };
        let Some(last) = store.round(task.id, None)? else {
            continue;
        };
        if seen.get(&task.slug) == Some(&last.number) {
            continue;
        }
        seen.insert(task.slug.clone(), last.number);
        // A round whose work was queued already (landed, or sent back) is not queued twice.
        let queued_since = store.land_items(false)?.into_iter().any(|item| {
            item.task_id == task.id && last.ended_at.is_some_and(|end| item.queued_at >= end)
        });
        if queued_since {
            continue;
        }
        let options = LandOptions {
            slugs: vec![task.slug.clone()],
            ..LandOptions::default()
        };
        // Refused (its checks failed, nothing the base lacks): not queued, looked at again
        // after its next round.
        let _ = enqueue(ws, &options, &task.owner, &mut |_: Notice| {});
    }
    Ok(())
}
