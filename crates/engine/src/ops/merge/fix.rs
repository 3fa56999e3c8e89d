//! `ganger merge --fix`: a conflict resolved by the task's own worker. The base is merged
//! into the task's branch in its worktree with git's conflict markers left in the files, and a
//! fix round (the engine's `fix`, in the task's session, its checks included) asks the worker
//! to resolve them. Once no marker is left in the conflicting files, ganger commits the
//! resolution (a merge commit on the task's branch) and the merge goes on; otherwise the
//! worktree stays mid-merge for another `ganger fix` and `ganger merge`.

use crate::base::brief::Brief;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::ops::merge::report::{MergeOptions, MergeOutcome, MergeReport, Ready};
use crate::round::launch::Launched;
use crate::task::fix::{FixOptions, fix};

/// The prompt of the resolving round.
fn conflict_prompt(base: &str, branch: &str, files: &[String]) -> String {
    let list: String = files.iter().map(|f| format!("- {f}\n")).collect();
    format!(
        "Merging the base branch {base} into this task's branch {branch} conflicts. These files \
         now hold git's conflict markers (<<<<<<<, =======, >>>>>>>):\n{list}\nResolve this \
         conflict: edit each file so that it keeps what both sides meant, with no conflict \
         marker left. Do not run git add, git commit or git merge: ganger commits the \
         resolution once no marker is left.\n"
    )
}

/// Starts the merge of the base into the task's worktree and runs the resolving round.
pub(crate) fn resolve(
    ws: &Workspace,
    ready: &Ready,
    options: &MergeOptions,
    conflicts: Vec<String>,
    report: &mut MergeReport,
    notices: &mut dyn Notices,
) -> Result<()> {
    let task = &ready.task;
    let message = format!(
        "Merge {} into task {}: conflicts resolved by its worker",
        task.base, task.slug
    );
    let started = ready.worktree.start_merge(&ready.base_ref, &message)?;
    let files = if started.is_empty() {
        conflicts
    } else {
        started
    };
    let launched = fix(
        ws,
        FixOptions {
            slug: task.slug.clone(),
            brief: Some(Brief::Message(conflict_prompt(
                &task.base,
                &task.branch,
                &files,
            ))),
            commander: Some(crate::ops::merge::report::merge_commander(options)),
            ..FixOptions::default()
        },
        notices,
    )?;
    let Launched::Finished(outcome) = launched else {
        unreachable!("a merge's round runs in the foreground");
    };
    report.fix_round = Some(outcome.round.number);
    if !outcome.round.checks_passed() {
        report.outcome = MergeOutcome::Unresolved;
        report.conflicts = files;
        report.reason = Some(format!(
            "round {} ended {}",
            outcome.round.number,
            outcome.round.status.as_str()
        ));
        return Ok(());
    }
    commit_resolution(ready, report)?;
    Ok(())
}

/// Commits a resolved merge in the task's worktree; false (and the report says which files)
/// while a conflict marker is left.
pub(crate) fn commit_resolution(ready: &Ready, report: &mut MergeReport) -> Result<bool> {
    let unmerged = ready.worktree.unmerged()?;
    let marked: Vec<String> = unmerged
        .into_iter()
        .filter(|file| {
            std::fs::read(ready.worktree.worktree.join(file)).is_ok_and(|bytes| {
                ganger_git::has_conflict_markers(&String::from_utf8_lossy(&bytes))
            })
        })
        .collect();
    if !marked.is_empty() {
        report.outcome = MergeOutcome::Unresolved;
        report.conflicts = marked;
        report.reason = Some("conflict markers are left in the files".into());
        return Ok(false);
    }
    let message = format!(
        "Merge {} into task {}: conflicts resolved by its worker",
        ready.task.base, ready.task.slug
    );
    report.resolution_commit = ready.worktree.commit_all(&message)?;
    Ok(true)
}
