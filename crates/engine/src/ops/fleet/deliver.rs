//! Delivering one claimed queue item: a start becomes `start()` with detach, a fix or a
//! broadcast becomes `fix()` with detach under the generation it was queued with. A refusal
//! (the task's owner changed: the store refuses the round in the transaction that would start
//! it; the commander is no longer allowed; its budget is spent; the options no longer hold)
//! marks the item with the readable reason; it never becomes a round.

use super::spec::StartSpec;
use crate::base::brief::Brief;
use crate::base::error::{EngineError, ErrorKind};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::round::launch::Launched;
use crate::task::fix::{FixOptions, fix_sent_under};
use crate::task::lookup::find_task;
use crate::task::start::start;
use ganger_store::{Backend, QueueItem, QueueKind, Round, Task};

/// How a delivery went.
#[derive(Debug)]
pub enum Delivery {
    /// The round runs in a detached host.
    Started { task: Box<Task>, round: Box<Round> },
    /// Refused for good, with why.
    Refused(String),
    /// Queued under a generation the task no longer has.
    Stale(String),
    /// Not now (the task has a round running, another command is starting it, or it holds new
    /// rounds): back in the queue.
    Later(String),
    /// The environment failed (the database, the disk, git, Docker), not the item: back in
    /// the queue, for as long as the scheduler's patience lasts.
    Unavailable(String),
}

/// Delivers `item`, which the scheduler has claimed.
pub fn deliver(
    ws: &Workspace,
    store: &dyn Backend,
    item: &QueueItem,
    notices: &mut dyn Notices,
) -> Delivery {
    let launched = match item.kind {
        QueueKind::Start => {
            let options =
                StartSpec::from_json(&item.options).and_then(|spec| spec.start_options(&item.slug));
            match options {
                Ok(mut options) => {
                    options.brief = Some(queued_brief(item));
                    options.commander = Some(item.commander.clone());
                    options.detach = true;
                    options.fleet = item.fleet.clone();
                    start(ws, options, notices)
                }
                Err(e) => Err(e),
            }
        }
        QueueKind::Fix | QueueKind::Broadcast => {
            let task = match find_task(store, &item.slug) {
                Ok(task) => task,
                Err(e) if e.kind == ErrorKind::Environment => {
                    return Delivery::Unavailable(e.message);
                }
                Err(e) => return Delivery::Refused(e.message),
            };
            if let Some(stale) = stale_reason(&task, item) {
                return Delivery::Stale(stale);
            }
            if let Some(spent) = crate::evidence::budget::exhausted(store, &task) {
                return Delivery::Refused(spent);
            }
            let options = FixOptions {
                slug: item.slug.clone(),
                brief: Some(queued_brief(item)),
                commander: Some(item.commander.clone()),
                detach: true,
                ..FixOptions::default()
            };
            fix_sent_under(ws, options, item.generation, notices)
        }
    };
    match launched {
        Ok(Launched::Detached { task, round, .. }) => Delivery::Started {
            task: Box::new(task),
            round: Box::new(round),
        },
        Ok(Launched::Finished(outcome)) => Delivery::Started {
            task: Box::new(outcome.task),
            round: Box::new(outcome.round),
        },
        Err(e) if e.passes => Delivery::Later(e.message),
        // The database, the disk, git or Docker failed, not the item: it waits and is sent
        // again (a database restarted mid-fleet refused three items before this).
        Err(e) if e.kind == ErrorKind::Environment => Delivery::Unavailable(e.message),
        Err(e) if e.message.contains("was sent under generation") => Delivery::Stale(e.message),
        Err(e) => Delivery::Refused(e.message),
    }
}

/// How a delivery went that failed before it began: the environment failed, or the item
/// cannot be delivered.
pub(super) fn failed_delivery(error: EngineError) -> Delivery {
    if error.passes {
        Delivery::Later(error.message)
    } else if error.kind == ErrorKind::Environment {
        Delivery::Unavailable(error.message)
    } else {
        Delivery::Refused(error.message)
    }
}

/// The prompt of a queued item: kept in the store, or in the file of an item queued before
/// it was.
fn queued_brief(item: &QueueItem) -> Brief {
    match &item.prompt {
        Some(prompt) => Brief::Message(prompt.clone()),
        None => Brief::File(item.prompt_file.clone()),
    }
}

/// Why an item queued under one generation of its task may not go to the task now.
fn stale_reason(task: &Task, item: &QueueItem) -> Option<String> {
    let queued = item.generation?;
    (queued != task.generation).then(|| {
        format!(
            "queued by {} under generation {queued} of {}, which is now at generation {} \
             (owner {}); not delivered",
            item.commander, task.slug, task.generation, task.owner
        )
    })
}
