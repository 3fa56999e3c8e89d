//! `ganger merge SLUG [--squash | --rebase] [--fix]`: puts a task's work into its base branch.
//!
//! A pipeline's task (`ganger plan`) is merged once its stage is `done`, on the evidence of its
//! executor's rounds.
//!
//! Refused, before anything changes, while a round runs, when the task's last round (rewound
//! rounds aside) did not pass (`Round::checks_passed`), when the main checkout has changes to
//! tracked files (a merge never touches them: the person's work there is not ganger's to
//! risk), and when the base is not a local branch. Then ganger commits the worktree's state on
//! the task's branch (the worker never commits), computes the base's new tip in memory
//! (`merge_commit.rs`), and only then moves the base: a fast-forward of the main checkout when
//! the base is checked out there (git refuses rather than overwrite a file), else the ref. A
//! conflict stops there, nothing half merged; with `--fix` the worker resolves it
//! (`merge_fix.rs`) and the merge goes on.

pub(crate) mod commit;
pub(crate) mod fix;
pub(crate) mod report;

use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::ops::merge::commit::{MergeMode, Planned, plan, rounds_phrase, task_message};
pub use crate::ops::merge::report::{MERGE_SCHEMA, MergeOptions, MergeOutcome, MergeReport};
use crate::ops::merge::report::{Ready, merge_commander};
use crate::task::lookup::{idle_rounds, settled_task};
use ganger_events::RoundStatus;
use ganger_store::{Round, Task};

/// Merges a task into its base branch.
pub fn merge(
    ws: &Workspace,
    options: &MergeOptions,
    notices: &mut dyn Notices,
) -> Result<MergeReport> {
    let ready = check(ws, options, notices)?;
    let mut report = MergeReport {
        schema: MERGE_SCHEMA,
        task: ready.name.clone(),
        mode: options.mode,
        outcome: MergeOutcome::Conflict,
        base: ready.task.base.clone(),
        branch: ready.task.branch.clone(),
        rounds: ready.kept.iter().map(|r| r.number).collect(),
        task_commit: None,
        resolution_commit: None,
        commit: None,
        conflicts: Vec::new(),
        fix_round: None,
        reason: None,
    };
    if ready.worktree.merge_in_progress() {
        // A conflict `--fix` left for another round: merged once no marker is left.
        if !crate::ops::merge::fix::commit_resolution(&ready, &mut report)? {
            return Ok(report);
        }
    } else {
        report.task_commit = ready.worktree.commit_all(&ready.message)?;
    }
    match apply(&ready, options.mode, &mut report)? {
        Some(conflicts) if options.fix => {
            crate::ops::merge::fix::resolve(ws, &ready, options, conflicts, &mut report, notices)?;
            if report.outcome == MergeOutcome::Unresolved {
                return Ok(report);
            }
            let ready = check(ws, options, notices)?;
            report.rounds = ready.kept.iter().map(|r| r.number).collect();
            if let Some(conflicts) = apply(&ready, options.mode, &mut report)? {
                report.outcome = MergeOutcome::Unresolved;
                report.conflicts = conflicts;
                report.reason = Some("the base still conflicts after the resolution".into());
            }
        }
        Some(conflicts) => {
            report.outcome = MergeOutcome::Conflict;
            report.conflicts = conflicts;
        }
        None => {}
    }
    if report.outcome == MergeOutcome::Merged
        && let Some(mut store) = ws.existing_store()?
        && let Some(task) = store.task(&report.task)?
    {
        let detail = serde_json::json!({
            "mode": report.mode,
            "base": report.base,
            "rounds": report.rounds,
            "task_commit": report.task_commit,
            "resolution_commit": report.resolution_commit,
            "commit": report.commit,
            "fix_round": report.fix_round,
        });
        let commander = merge_commander(options);
        store.record_merge(task.id, &commander, detail)?;
        // Its work is the base's now: what it conflicted with is the base's to report.
        store.record_conflicts(task.id, &task.slug, None, Some(&commander), &[])?;
    }
    Ok(report)
}

/// The refusals: anything that makes the merge impossible or unsafe, before any change.
pub(crate) fn check(
    ws: &Workspace,
    options: &MergeOptions,
    notices: &mut dyn Notices,
) -> Result<Ready> {
    let (mut store, task) = settled_task(ws, &options.slug, notices)?;
    crate::task::rules::require_owner(&task, &merge_commander(options), "merge")?;
    let task = pipeline_executor(&*store, task)?;
    let rounds = idle_rounds(&*store, &task)?;
    let kept: Vec<Round> = rounds.into_iter().filter(|r| !r.rewound).collect();
    let last = kept
        .last()
        .ok_or_else(|| EngineError::invalid(format!("task {} has no rounds", task.slug)))?;
    if !last.checks_passed() {
        return Err(not_passed(&task, last));
    }
    let main = ganger_git::discover(&ws.repo.main)?;
    let dirty = main.tracked_changes()?;
    if !dirty.is_empty() {
        return Err(EngineError::invalid(format!(
            "the main checkout {} has uncommitted changes ({}); ganger merge does not touch them",
            ws.repo.main.display(),
            dirty.join(", ")
        ))
        .hint("commit or stash them, then merge again"));
    }
    let base_ref = format!("refs/heads/{}", task.base);
    if main.resolve(&base_ref).is_none() {
        return Err(EngineError::invalid(format!(
            "the base {} of task {} is not a local branch to merge into",
            task.base, task.slug
        )));
    }
    if let Some(checkout) = main.checkout_of(&task.base)?
        && checkout.canonicalize().ok() != ws.repo.main.canonicalize().ok()
    {
        return Err(EngineError::invalid(format!(
            "the base branch {} is checked out in {}, not in the main checkout",
            task.base,
            checkout.display()
        )));
    }
    // A task whose rounds ran on other hosts comes here from its fleet's remote.
    let task = match crate::round::task_move::bring_here(
        ws,
        &mut *store,
        &task,
        &merge_commander(options),
    )? {
        Some(moved) => moved,
        None => task,
    };
    if !task.worktree.is_dir() {
        return Err(EngineError::invalid(format!(
            "the worktree {} of task {} is gone",
            task.worktree.display(),
            task.slug
        )));
    }
    let worktree = crate::evidence::task_worktree::check_task_worktree(ws, &task)?;
    // A branch deleted by hand leaves the worktree on an unborn branch: a commit there would
    // be a root commit with none of the base's history.
    if main
        .resolve(&format!("refs/heads/{}", task.branch))
        .is_none()
    {
        return Err(EngineError::invalid(format!(
            "the branch {} of task {} is gone (deleted outside ganger); nothing was committed",
            task.branch, task.slug
        ))
        .hint(format!(
            "make it again at the task's base ({}) with `git branch {} {}` and merge again",
            task.base_commit.as_deref().unwrap_or(&task.base),
            task.branch,
            task.base_commit.as_deref().unwrap_or(&task.base)
        )));
    }
    let message = {
        let kept: Vec<&Round> = kept.iter().collect();
        task_message(&options.slug, &task, &kept, &prompts(ws, &task, &kept))
    };
    Ok(Ready {
        name: options.slug.clone(),
        task,
        kept,
        worktree,
        main,
        base_ref,
        message,
    })
}

/// A pipeline's work is its executor's (the role tasks share the pipeline's worktree and
/// branch): merged once the pipeline is done, every reviewer having passed, with the evidence
/// of the executor's last round. Any other task is itself.
fn pipeline_executor(store: &dyn ganger_store::Backend, task: Task) -> Result<Task> {
    let Some(pipeline) = store.pipeline(task.id)? else {
        return Ok(task);
    };
    if pipeline.stage != "done" {
        return Err(EngineError::invalid(format!(
            "the pipeline of {} is at stage {}; only a pipeline whose reviewers all passed is merged",
            task.slug, pipeline.stage
        ))
        .hint(format!("`ganger status {}` shows where it stands", task.slug)));
    }
    store
        .role_tasks(task.id)?
        .into_iter()
        .find(|role| role.role.as_deref() == Some("executor"))
        .ok_or_else(|| {
            EngineError::invalid(format!(
                "the pipeline of {} has no executor's work",
                task.slug
            ))
        })
}

fn not_passed(task: &Task, round: &Round) -> EngineError {
    let failed: Vec<&str> = round.failed_checks().map(|c| c.name.as_str()).collect();
    let why = if !failed.is_empty() {
        format!("checks failed: {}", failed.join(", "))
    } else if round.status != RoundStatus::Done {
        format!("it ended {}", round.status.as_str())
    } else {
        "its checks did not all run".to_owned()
    };
    EngineError::invalid(format!(
        "round {} of {} did not pass ({why}); only a task whose last round passed is merged",
        round.number, task.slug
    ))
    .hint(format!(
        "fix it with `ganger fix {}`, or rewind to a round that passed",
        task.slug
    ))
}

/// The kept rounds' prompts, as sent.
fn prompts(ws: &Workspace, task: &Task, kept: &[&Round]) -> Vec<String> {
    kept.iter()
        .map(|r| {
            let prompt =
                std::fs::read_to_string(ws.state.round_file(&task.slug, r.number, "prompt.md"))
                    .unwrap_or_default();
            crate::evidence::resume_note::strip_note(&prompt).to_owned()
        })
        .collect()
}

/// Computes the base's new tip and moves the base there; the conflicting files instead, with
/// nothing changed.
fn apply(ready: &Ready, mode: MergeMode, report: &mut MergeReport) -> Result<Option<Vec<String>>> {
    let task = &ready.task;
    let main = &ready.main;
    let base_tip = main
        .resolve(&ready.base_ref)
        .ok_or_else(|| EngineError::invalid(format!("the base {} is gone", task.base)))?;
    let task_tip = main
        .resolve(&format!("refs/heads/{}", task.branch))
        .ok_or_else(|| EngineError::invalid(format!("the branch {} is gone", task.branch)))?;
    if main.is_ancestor(&task_tip, &base_tip)? {
        return Err(EngineError::invalid(format!(
            "task {} has nothing to merge: {} has every commit of {}",
            task.slug, task.base, task.branch
        )));
    }
    let kept: Vec<&Round> = ready.kept.iter().collect();
    let merge_message = format!(
        "Merge task {} (branch {}, {}) into {}",
        ready.name,
        task.branch,
        rounds_phrase(&kept),
        task.base
    );
    let commit = match plan(
        main,
        mode,
        &base_tip,
        &task_tip,
        &merge_message,
        &ready.message,
    )? {
        Planned::Conflict(files) => return Ok(Some(files)),
        Planned::Nothing => {
            return Err(EngineError::invalid(format!(
                "task {} has nothing to merge: {} already has all of its work",
                task.slug, task.base
            )));
        }
        Planned::Commit(commit) => commit,
    };
    if mode == MergeMode::Rebase && commit != task_tip {
        // The task's branch becomes the replayed commits; its worktree was just committed.
        ready.worktree.reset_keep(&commit)?;
    }
    match main.checkout_of(&task.base)? {
        Some(_) => main.fast_forward(&commit).map_err(|e| {
            EngineError::invalid(format!(
                "the main checkout could not take the merge, nothing was merged: {e}"
            ))
        })?,
        None => main.move_branch(&task.base, &commit, &base_tip)?,
    }
    report.outcome = MergeOutcome::Merged;
    report.commit = Some(commit);
    report.conflicts.clear();
    Ok(None)
}
