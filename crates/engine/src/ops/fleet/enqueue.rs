//! Writing work into the queue: `start --queue`, `fix --queue` and `broadcast` (fleets in
//! `submit.rs`). Nothing here starts a round; the scheduler does. Everything that can be
//! refused is refused before anything is written: a bad slug, no text, an unknown agent, a
//! task that exists (start) or does not (fix); a start queued already is refused by the
//! store itself as it inserts the item.

use super::spec::StartSpec;
use crate::base::brief::read_brief;
use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::task::admission::known_adapter;
use crate::task::fix::FixOptions;
use crate::task::lookup::find_task;
use crate::task::start::StartOptions;
use ganger_store::{NewQueued, QueueItem, QueueKind};

/// An item to queue.
pub(super) struct Item<'a> {
    pub slug: &'a str,
    pub kind: QueueKind,
    pub prompt: &'a str,
    pub options: serde_json::Value,
    pub commander: String,
    pub generation: Option<i64>,
    pub fleet: Option<String>,
    pub after: Vec<String>,
}

impl Item<'_> {
    /// The item to store, its prompt in the store itself, so that a worker on any host reads
    /// it.
    pub(super) fn new_queued(self) -> NewQueued {
        NewQueued {
            slug: self.slug.to_owned(),
            kind: self.kind,
            options: self.options,
            prompt_file: std::path::PathBuf::new(),
            prompt: Some(self.prompt.to_owned()),
            commander: self.commander,
            generation: self.generation,
            fleet: self.fleet,
            after: self.after,
            not_before: 0,
        }
    }
}

/// Queues the item, its prompt with it; the store refuses a start of a slug queued already
/// (its unique index, so that of racing commands exactly one is accepted).
fn enqueue(store: &mut dyn ganger_store::Backend, item: Item<'_>) -> Result<QueueItem> {
    crate::base::faults::pause("before-enqueue");
    Ok(store.enqueue(&item.new_queued())?)
}

/// `ganger start --queue`: a new task's first round, for the scheduler to start.
pub fn queue_start(ws: &Workspace, options: &StartOptions) -> Result<QueueItem> {
    crate::base::slug::check_slug(&options.slug)?;
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    let prompt = read_brief(brief)?;
    if options.detach || options.until_green.is_some() || options.worktree.is_some() {
        return Err(EngineError::invalid(
            "--queue takes no --detach, --until-green or --worktree: the scheduler starts \
             every queued round detached in a worktree of its own",
        ));
    }
    let agent = options
        .agent
        .clone()
        .unwrap_or_else(|| ws.config.defaults.agent.clone());
    known_adapter(ws, &agent)?;
    let mut store = ws.open_store()?;
    if store.task(&options.slug)?.is_some() {
        return Err(EngineError::invalid(format!(
            "task {} exists already",
            options.slug
        )));
    }
    // Whether its start is queued already is the store's to say, as it inserts the item.
    let spec = serde_json::to_value(StartSpec::of(options))
        .map_err(|e| EngineError::environment("failed to encode the queued start", e))?;
    enqueue(
        &mut *store,
        Item {
            slug: &options.slug,
            kind: QueueKind::Start,
            prompt: &prompt,
            options: spec,
            commander: commander(options.commander.as_deref()),
            generation: None,
            fleet: None,
            after: Vec::new(),
        },
    )
}

/// `ganger fix --queue`: the next round of a task, queued under the task's generation now.
pub fn queue_fix(ws: &Workspace, options: &FixOptions) -> Result<QueueItem> {
    let brief = options.brief.as_ref().ok_or_else(|| {
        EngineError::invalid("give the task text with --brief FILE or --message TEXT")
    })?;
    if options.detach || options.until_green.is_some() || options.model.is_some() {
        return Err(EngineError::invalid(
            "--queue takes no --detach, --until-green or --model: a queued round runs \
             detached with the task's model",
        ));
    }
    let prompt = read_brief(brief)?;
    let Some(mut store) = ws.existing_store()? else {
        crate::base::slug::check_task_name(&options.slug)?;
        return Err(EngineError::not_found(format!("no task {}", options.slug)));
    };
    let task = find_task(&*store, &options.slug)?;
    let sender = commander(options.commander.as_deref());
    crate::task::rules::require_admitted(&task, &sender, "send rounds to")?;
    if crate::task::rules::Inbound::of(&task) == crate::task::rules::Inbound::Refuse {
        return Err(crate::task::rules::refused(&task));
    }
    enqueue(
        &mut *store,
        Item {
            slug: &task.slug,
            kind: QueueKind::Fix,
            prompt: &prompt,
            options: serde_json::json!({}),
            commander: sender,
            generation: Some(task.generation),
            fleet: None,
            after: Vec::new(),
        },
    )
}

/// `ganger broadcast`: one fix round queued for each of `only` (every top-level task when
/// empty), each under its task's generation now.
pub fn broadcast(
    ws: &Workspace,
    prompt: &str,
    only: &[String],
    as_name: Option<&str>,
) -> Result<Vec<QueueItem>> {
    let Some(mut store) = ws.existing_store()? else {
        return Err(EngineError::invalid("there are no tasks to broadcast to"));
    };
    let tasks = if only.is_empty() {
        let mut tasks = Vec::new();
        for summary in store.task_summaries()? {
            if let Some(task) = store.task(&summary.slug)?
                && task.parent.is_none()
            {
                tasks.push(task);
            }
        }
        tasks
    } else {
        only.iter()
            .map(|slug| find_task(&*store, slug))
            .collect::<Result<Vec<_>>>()?
    };
    let commander = commander(as_name);
    // Named tasks: every one must admit the sender, or nothing is queued. Every task: the
    // ones that admit it and do not refuse new rounds.
    let tasks: Vec<_> = if only.is_empty() {
        tasks
            .into_iter()
            .filter(|t| {
                t.admits(&commander)
                    && crate::task::rules::Inbound::of(t) != crate::task::rules::Inbound::Refuse
            })
            .collect()
    } else {
        for task in &tasks {
            crate::task::rules::require_admitted(task, &commander, "broadcast to")?;
            if crate::task::rules::Inbound::of(task) == crate::task::rules::Inbound::Refuse {
                return Err(crate::task::rules::refused(task));
            }
        }
        tasks
    };
    if tasks.is_empty() {
        return Err(EngineError::invalid(format!(
            "there are no tasks {commander} may broadcast to"
        ))
        .hint("a task takes rounds from its owner and the commanders it allows"));
    }
    let mut queued = Vec::new();
    for task in tasks {
        queued.push(enqueue(
            &mut *store,
            Item {
                slug: &task.slug,
                kind: QueueKind::Broadcast,
                prompt,
                options: serde_json::json!({}),
                commander: commander.clone(),
                generation: Some(task.generation),
                fleet: None,
                after: Vec::new(),
            },
        )?);
    }
    Ok(queued)
}
