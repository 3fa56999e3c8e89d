//! `ganger land SLUG...`: queues tasks to land on their base branches. Every task is checked
//! before any is queued (bad input queues nothing): it exists, the commander owns it or is
//! allowed by its owner, no round of it runs, its last round (rewound ones aside) passed its
//! checks, its base is a local branch not checked out with uncommitted changes, and it has
//! work the base lacks. Then each task's worktree is committed on its branch (the worker never
//! commits), as `ganger merge` does, and that commit is what lands.

use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::ops::land::report::{LandOptions, QueuedTask};
use crate::task::lookup::{idle_rounds, settled_task};
use ganger_git::Repo;
use ganger_store::{Backend, NewLandItem, Round, Task};

/// A task checked and ready to queue.
struct Ready {
    task: Task,
    worktree: Repo,
    rounds: Vec<u32>,
}

/// Queues `options.slugs`, all or none.
pub(crate) fn enqueue(
    ws: &Workspace,
    options: &LandOptions,
    commander: &str,
    notices: &mut dyn Notices,
) -> Result<Vec<QueuedTask>> {
    let main = ganger_git::discover(&ws.repo.main)?;
    let mut ready = Vec::new();
    let mut store: Option<Box<dyn Backend>> = None;
    for slug in &options.slugs {
        if options.slugs.iter().filter(|s| *s == slug).count() > 1 {
            return Err(EngineError::invalid(format!("task {slug} is named twice")));
        }
        let (opened, task) = settled_task(ws, slug, notices)?;
        ready.push(check(ws, &*opened, &main, task, commander)?);
        store = Some(opened);
    }
    let Some(mut store) = store else {
        return Err(EngineError::invalid(
            "ganger land needs a task to queue, or --run",
        ));
    };
    let mut commits = Vec::new();
    for each in &ready {
        let numbers: Vec<String> = each.rounds.iter().map(u32::to_string).collect();
        let rounds = if numbers.len() == 1 {
            "round"
        } else {
            "rounds"
        };
        let message = format!(
            "{slug}: the work of task {slug} ({rounds} {})\n\nCommitted by ganger land from the \
             worktree of task {slug} (agent {}).\n",
            numbers.join(", "),
            each.task.agent,
            slug = each.task.slug,
        );
        each.worktree.commit_all(&message)?;
        let branch = format!("refs/heads/{}", each.task.branch);
        let tip = main
            .resolve(&branch)
            .ok_or_else(|| gone_branch(&each.task))?;
        let head = main
            .resolve(&format!("refs/heads/{}", each.task.base))
            .ok_or_else(|| no_base(&each.task))?;
        if crate::ops::land::landed::base_has(&main, &tip, &head)? {
            return Err(EngineError::invalid(format!(
                "task {} has nothing to land: {} has every commit of {}",
                each.task.slug, each.task.base, each.task.branch
            )));
        }
        commits.push(tip);
    }
    let mut queued = Vec::new();
    for (each, commit) in ready.iter().zip(commits) {
        let item = store.land_enqueue(&NewLandItem {
            task_id: each.task.id,
            base: each.task.base.clone(),
            task_commit: commit.clone(),
            commander: commander.to_owned(),
            priority: options.priority,
            fix: options.fix,
        })?;
        let Some(item) = item else {
            return Err(already(&each.task));
        };
        queued.push(QueuedTask {
            task: each.task.slug.clone(),
            base: item.base,
            commit,
            item: item.id,
        });
    }
    Ok(queued)
}

/// Everything that refuses a task, before anything is changed.
fn check(
    ws: &Workspace,
    store: &dyn Backend,
    main: &Repo,
    task: Task,
    commander: &str,
) -> Result<Ready> {
    crate::task::rules::require_admitted(&task, commander, "land")?;
    if store.pipeline(task.id)?.is_some() {
        return Err(EngineError::invalid(format!(
            "task {} is a pipeline; land its work with `ganger merge {}`",
            task.slug, task.slug
        )));
    }
    let rounds = idle_rounds(store, &task)?;
    let kept: Vec<&Round> = rounds.iter().filter(|r| !r.rewound).collect();
    let last = kept
        .last()
        .ok_or_else(|| EngineError::invalid(format!("task {} has no rounds", task.slug)))?;
    if !last.checks_passed() {
        let failed: Vec<&str> = last.failed_checks().map(|c| c.name.as_str()).collect();
        let why = if failed.is_empty() {
            format!("it ended {}", last.status.as_str())
        } else {
            format!("checks failed: {}", failed.join(", "))
        };
        return Err(EngineError::invalid(format!(
            "round {} of {} did not pass its checks ({why}); only a task whose last round \
             passed is queued to land",
            last.number, task.slug
        ))
        .hint(format!(
            "fix it with `ganger fix {} --until-green`",
            task.slug
        )));
    }
    if main.resolve(&format!("refs/heads/{}", task.base)).is_none() {
        return Err(no_base(&task));
    }
    if let Some(checkout) = main.checkout_of(&task.base)? {
        let there = ganger_git::discover(&checkout)?;
        let dirty = there.tracked_changes()?;
        if !dirty.is_empty() {
            return Err(EngineError::invalid(format!(
                "the base {} of task {} is checked out in {} with uncommitted changes ({}); \
                 nothing was queued",
                task.base,
                task.slug,
                checkout.display(),
                dirty.join(", ")
            ))
            .hint("commit or stash them, then queue again"));
        }
    }
    if main
        .resolve(&format!("refs/heads/{}", task.branch))
        .is_none()
    {
        return Err(gone_branch(&task));
    }
    if store
        .land_items(true)?
        .iter()
        .any(|item| item.task_id == task.id)
    {
        return Err(already(&task));
    }
    let worktree = crate::evidence::task_worktree::check_task_worktree(ws, &task)?;
    let rounds = kept.iter().map(|r| r.number).collect();
    Ok(Ready {
        task,
        worktree,
        rounds,
    })
}

fn no_base(task: &Task) -> EngineError {
    EngineError::invalid(format!(
        "the base {} of task {} is not a local branch to land on; nothing was queued",
        task.base, task.slug
    ))
}

fn gone_branch(task: &Task) -> EngineError {
    EngineError::invalid(format!(
        "the branch {} of task {} is gone (deleted outside ganger); nothing was queued",
        task.branch, task.slug
    ))
}

fn already(task: &Task) -> EngineError {
    EngineError::invalid(format!(
        "task {} is queued to land already; nothing was queued",
        task.slug
    ))
    .hint("`ganger land status` shows the queue")
}
