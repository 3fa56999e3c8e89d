//! `ganger land --fix`: a task the lander sent back goes to its own worker. The base (which
//! now holds what the batch landed) is merged into the task's worktree first, so that the
//! worker sees what it meets: a conflict leaves git's markers in the files, and the round's
//! checks run on the task's work combined with the base. The fix round names the conflicting
//! files and the lines of each hunk, or the checks that failed in the batch with the end of
//! their output. The round runs detached, so the lander goes on with the next batches; once
//! it passes, the resolution is committed and the task is queued again (once: `--fix` is not
//! asked again of a task queued by its fix round).

use crate::base::brief::Brief;
use crate::base::error::Result;
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::evidence::conflicts::marker_lines;
use crate::ops::land::report::{FixRound, Returned};
use crate::round::launch::Launched;
use crate::task::fix::{FixOptions, fix};
use ganger_store::{Backend, LandItem, NewLandItem};

/// The fix round's prompt.
fn prompt(item: &LandItem, returned: &Returned, markers: &[(String, Vec<[u32; 2]>)]) -> String {
    let mut text = format!(
        "ganger land could not land this task on {}. The base has been merged into this \
         worktree",
        item.base
    );
    if markers.is_empty() {
        text.push_str(" (no conflict).\n");
    } else {
        text.push_str(
            ", and these files now hold git's conflict markers (<<<<<<<, =======, >>>>>>>):\n",
        );
        for (file, lines) in markers {
            let hunks: Vec<String> = lines.iter().map(|[a, b]| format!("{a}-{b}")).collect();
            text.push_str(&format!("- {file} (lines {})\n", hunks.join(", ")));
        }
        text.push_str(
            "Resolve them: keep what both sides meant, with no conflict marker left. Do not run \
             git add, git commit or git merge.\n",
        );
    }
    for check in &returned.checks {
        text.push_str(&format!(
            "\nThe check {} failed when this task was tested together with the tasks ahead of \
             it in the batch (now in the base). The end of its output:\n{}\n",
            check.name, check.tail
        ));
    }
    if !returned.checks.is_empty() {
        text.push_str(
            "\nChange this task's work so that the checks pass with the base as it is now.\n",
        );
    }
    text
}

/// Sends `item`, sent back by the lander as `returned`, to its worker: a fix round in a
/// detached host, so that the lander goes on meanwhile ([`follow_up`] queues the task again
/// once the round passed). The round's number, when it started.
pub(crate) fn fix_returned(
    ws: &Workspace,
    store: &mut dyn Backend,
    item: &LandItem,
    returned: &Returned,
    notices: &mut dyn Notices,
) -> Result<Option<u32>> {
    let task = crate::task::lookup::find_task(&*store, &item.slug)?;
    let worktree = crate::evidence::task_worktree::check_task_worktree(ws, &task)?;
    let base_ref = format!("refs/heads/{}", item.base);
    let conflicting = if worktree.merge_in_progress() {
        worktree.unmerged()?
    } else {
        worktree.start_merge(&base_ref, &merge_message(item))?
    };
    let markers: Vec<(String, Vec<[u32; 2]>)> = conflicting
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(worktree.worktree.join(file)).unwrap_or_default();
            (file.clone(), marker_lines(&text))
        })
        .collect();
    notices.notice(Notice::Land {
        base: item.base.clone(),
        message: format!(
            "{} goes back to its worker for a fix round (--fix)",
            item.slug
        ),
    });
    let launched = fix(
        ws,
        FixOptions {
            slug: task.slug.clone(),
            brief: Some(Brief::Message(prompt(item, returned, &markers))),
            commander: Some(item.commander.clone()),
            detach: true,
            ..FixOptions::default()
        },
        notices,
    )?;
    Ok(Some(match launched {
        Launched::Finished(outcome) => outcome.round.number,
        Launched::Detached { round, .. } => round.number,
    }))
}

/// Whether a file of the worktree's merge still holds a conflict marker.
pub(crate) fn marked(worktree: &ganger_git::Repo) -> Result<bool> {
    Ok(worktree.unmerged()?.iter().any(|file| {
        std::fs::read(worktree.worktree.join(file))
            .is_ok_and(|b| ganger_git::has_conflict_markers(&String::from_utf8_lossy(&b)))
    }))
}

/// The message of the commit of a fix round's resolution.
fn merge_message(item: &LandItem) -> String {
    format!(
        "Merge {} into task {}: for ganger land, resolved by its worker",
        item.base, item.slug
    )
}

/// `item`'s fix round `round`, once it ended (`None` while it runs): when it passed with no
/// conflict marker left, the resolution is committed on the task's branch and the task is
/// queued again (without `--fix`).
pub(crate) fn follow_up(
    ws: &Workspace,
    store: &mut dyn Backend,
    item: &LandItem,
    round: u32,
) -> Result<Option<FixRound>> {
    let task = crate::task::lookup::find_task(&*store, &item.slug)?;
    let Some(ended) = store
        .round(task.id, Some(round))?
        .filter(|r| r.ended_at.is_some())
    else {
        return Ok(None);
    };
    let mut done = FixRound {
        task: item.slug.clone(),
        round: Some(round),
        passed: ended.checks_passed(),
        requeued: false,
    };
    let worktree = crate::evidence::task_worktree::check_task_worktree(ws, &task)?;
    if !done.passed || marked(&worktree)? {
        done.passed = false;
        return Ok(Some(done));
    }
    worktree.commit_all(&merge_message(item))?;
    let main = ganger_git::discover(&ws.repo.main)?;
    if let Some(tip) = main.resolve(&format!("refs/heads/{}", task.branch)) {
        let queued = store.land_enqueue(&NewLandItem {
            task_id: task.id,
            base: item.base.clone(),
            task_commit: tip,
            commander: item.commander.clone(),
            priority: item.priority,
            fix: false,
        })?;
        done.requeued = queued.is_some();
    }
    Ok(Some(done))
}
