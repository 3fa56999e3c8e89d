//! What a round's end adds to the evidence a commander reads: the task's last `DONE:` line,
//! and journal entries for a budget reached, checks that failed, and files the task's work
//! changes that another task's unmerged work changes too. Written after the end itself is
//! recorded; a failure here is never the round's failure.

use crate::evidence::conflicts::changed_paths as paths;
use ganger_store::{FailedCheck, JournalEvent, OverlappingTask, Round, Store, Task};

/// Records the evidence of the ended `round` of `task`; `budget` is why the host stopped it
/// for a budget, if it did.
pub(crate) fn record(store: &mut dyn Store, task: &Task, round: &Round, budget: Option<&str>) {
    let commander = Some(round.commander.as_str());
    let number = Some(round.number);
    if let Some(done) = &round.summary.done {
        let _ = store.record_done(task.id, round.number, done);
    }
    if let Some(why) = budget {
        let hit = JournalEvent::BudgetHit {
            reason: why.to_owned(),
            cost_usd: round.summary.cost_usd,
            tokens: round.summary.budget_tokens(),
        };
        let _ = store.add_journal(task.id, number, commander, &hit);
    }
    let checks: Vec<FailedCheck> = round
        .failed_checks()
        .map(|check| {
            let result = check.result.as_ref();
            FailedCheck {
                name: check.name.clone(),
                exit_code: result.and_then(|r| r.exit_code),
                timed_out: result.is_some_and(|r| r.timed_out),
            }
        })
        .collect();
    if !checks.is_empty() {
        let failed = JournalEvent::ChecksFailed { checks };
        let _ = store.add_journal(task.id, number, commander, &failed);
    }
    if task.parent.is_none() && !round.worktree_changes.is_empty() {
        overlaps(store, task, round);
    }
}

/// Journals the files this task's work shares with other tasks' open work, if any.
fn overlaps(store: &mut dyn Store, task: &Task, round: &Round) {
    let mine = paths(&round.worktree_changes);
    let Ok(others) = store.open_work(task.id) else {
        return;
    };
    let with: Vec<OverlappingTask> = others
        .iter()
        .filter_map(|(slug, changes)| {
            let files: Vec<String> = paths(changes)
                .intersection(&mine)
                .map(|file| (*file).to_owned())
                .collect();
            (!files.is_empty()).then(|| OverlappingTask {
                task: slug.clone(),
                files,
            })
        })
        .collect();
    if !with.is_empty() {
        let overlap = JournalEvent::Overlap { with };
        let _ = store.add_journal(
            task.id,
            Some(round.number),
            Some(&round.commander),
            &overlap,
        );
    }
}
