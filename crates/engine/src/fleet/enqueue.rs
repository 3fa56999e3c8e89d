//! Writing work into the queue: `start --queue`, `fix --queue`, `broadcast` and `fleet
//! submit|run`. Nothing here starts a round; the scheduler does. Everything that can be
//! refused is refused before anything is written: a bad slug, no text, an unknown agent, a
//! task that exists (start) or does not (fix), a cycle in a fleet.

use super::file::Fleet;
use super::spec::StartSpec;
use crate::brief::read_brief;
use crate::commander::commander;
use crate::error::{EngineError, Result};
use crate::fix::{FixOptions, find_task};
use crate::start::{StartOptions, known_adapter};
use crate::workspace::Workspace;
use ganger_events::RoundStatus;
use ganger_store::{
    EvidenceStore, FleetRecord, NewQueued, QueueItem, QueueKind, QueueState, QueueStore,
    SqliteStore, Store, now_ms,
};

/// Writes a queued round's prompt beside the task's round files.
fn write_prompt(ws: &Workspace, slug: &str, prompt: &str) -> Result<std::path::PathBuf> {
    let dir = ws.state.task_dir(slug);
    std::fs::create_dir_all(&dir).map_err(|e| EngineError::io("create", &dir, e))?;
    let path = dir.join(format!("queued-{}.prompt.md", crate::launch::new_token()));
    std::fs::write(&path, prompt).map_err(|e| EngineError::io("write", &path, e))?;
    Ok(path)
}

/// Whether `slug` has a queued start still to do.
fn start_queued(store: &SqliteStore, slug: &str) -> Result<bool> {
    Ok(store
        .open_items()?
        .iter()
        .any(|item| item.slug == slug && item.kind == QueueKind::Start))
}

struct Item<'a> {
    slug: &'a str,
    kind: QueueKind,
    prompt: &'a str,
    options: serde_json::Value,
    commander: String,
    generation: Option<i64>,
    fleet: Option<String>,
    after: Vec<String>,
}

fn enqueue(ws: &Workspace, store: &mut SqliteStore, item: Item<'_>) -> Result<QueueItem> {
    let prompt_file = write_prompt(ws, item.slug, item.prompt)?;
    Ok(store.enqueue(&NewQueued {
        slug: item.slug.to_owned(),
        kind: item.kind,
        options: item.options,
        prompt_file,
        commander: item.commander,
        generation: item.generation,
        fleet: item.fleet,
        after: item.after,
        not_before: 0,
    })?)
}

/// `ganger start --queue`: a new task's first round, for the scheduler to start.
pub fn queue_start(ws: &Workspace, options: &StartOptions) -> Result<QueueItem> {
    crate::slug::check_slug(&options.slug)?;
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
    if store.task(&options.slug)?.is_some() || start_queued(&store, &options.slug)? {
        return Err(EngineError::invalid(format!(
            "task {} exists already (or its start is queued)",
            options.slug
        )));
    }
    let spec = serde_json::to_value(StartSpec::of(options))
        .map_err(|e| EngineError::invalid(e.to_string()))?;
    enqueue(
        ws,
        &mut store,
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
        crate::slug::check_task_name(&options.slug)?;
        return Err(EngineError::invalid(format!("no task {}", options.slug)));
    };
    let task = find_task(&store, &options.slug)?;
    let sender = commander(options.commander.as_deref());
    crate::ownership::require_admitted(&task, &sender, "send rounds to")?;
    if crate::ownership::Inbound::of(&task) == crate::ownership::Inbound::Refuse {
        return Err(crate::ownership::refused(&task));
    }
    enqueue(
        ws,
        &mut store,
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
            .map(|slug| find_task(&store, slug))
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
                    && crate::ownership::Inbound::of(t) != crate::ownership::Inbound::Refuse
            })
            .collect()
    } else {
        for task in &tasks {
            crate::ownership::require_admitted(task, &commander, "broadcast to")?;
            if crate::ownership::Inbound::of(task) == crate::ownership::Inbound::Refuse {
                return Err(crate::ownership::refused(task));
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
            ws,
            &mut store,
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

/// Marks `ended` the delivered items whose round has ended while no scheduler looked (it was
/// killed, or stopped), so that a task interrupted then is resumed, not taken for pending.
fn end_finished_deliveries(store: &mut SqliteStore) -> Result<()> {
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

/// The prompt of a round that continues an interrupted one.
pub const CONTINUE: &str = "continue";

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
    crate::reaper::settle_running(ws, &mut store, &mut |_: crate::notice::Notice| {})?;
    let limits =
        serde_json::to_value(&fleet.limits).map_err(|e| EngineError::invalid(e.to_string()))?;
    store.save_fleet(&FleetRecord {
        name: fleet.name.clone(),
        file: Some(fleet.file.to_string_lossy().into_owned()),
        limits,
        created_at: now_ms(),
    })?;
    if fleet.budget.usd.is_some() || fleet.budget.tokens.is_some() {
        store.set_fleet_budget(&fleet.name, fleet.budget.usd, fleet.budget.tokens)?;
    }
    end_finished_deliveries(&mut store)?;
    let open = store.open_items()?;
    let commander = commander(as_name);
    let mut submitted = Submitted::default();
    for task in &fleet.tasks {
        if open.iter().any(|item| item.slug == task.slug) {
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
        enqueue(
            ws,
            &mut store,
            Item {
                slug: &task.slug,
                kind,
                prompt,
                options: task.options.clone(),
                commander: commander.clone(),
                generation,
                fleet: Some(fleet.name.clone()),
                after: task.after.clone(),
            },
        )?;
        match kind {
            QueueKind::Start => submitted.started.push(task.slug.clone()),
            _ => submitted.resumed.push(task.slug.clone()),
        }
    }
    Ok(submitted)
}
