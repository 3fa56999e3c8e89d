//! Running tasks that change the same files: for the task table, from each running task's
//! worktree as it is now (`git status`, plus what its branch committed since its base), one
//! git status per running round, so the cost grows with what runs, not with the task count.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_store::{Store, Task};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Two running tasks and the files both change.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Overlap {
    /// The two tasks, in slug order.
    pub tasks: [String; 2],
    pub files: Vec<String>,
}

/// The paths a task's worktree changes against its base now (nothing for a worktree that is
/// gone or unreadable: the table is never refused for it).
fn changed_paths(ws: &Workspace, task: &Task) -> BTreeSet<String> {
    let Ok(worktree) = ws.repo.open_worktree(&task.worktree) else {
        return BTreeSet::new();
    };
    let mut paths: BTreeSet<String> =
        crate::evidence::tree_change::status(ws, &task.worktree, &worktree)
            .map(|s| {
                s.entries
                    .into_iter()
                    .flat_map(|e| std::iter::once(e.path).chain(e.from))
                    .collect()
            })
            .unwrap_or_default();
    if let (Some(base), Ok(Some(head))) = (&task.base_commit, worktree.head())
        && &head != base
        && let Ok(names) =
            ganger_git::Git::new(&task.worktree).text(["diff", "--name-only", base, &head])
    {
        paths.extend(names.lines().map(str::to_owned));
    }
    paths
}

/// Every pair of running tasks whose worktrees change a file in common.
pub(crate) fn running_overlaps(ws: &Workspace, store: &dyn Store) -> Result<Vec<Overlap>> {
    let running: BTreeMap<String, Task> = store
        .running_rounds()?
        .into_iter()
        .map(|(task, _)| (task.slug.clone(), task))
        .collect();
    let changed: Vec<(&String, BTreeSet<String>)> = running
        .iter()
        .map(|(slug, task)| (slug, changed_paths(ws, task)))
        .collect();
    let mut overlaps = Vec::new();
    for (i, (first, first_paths)) in changed.iter().enumerate() {
        for (second, second_paths) in &changed[i + 1..] {
            let files: Vec<String> = first_paths.intersection(second_paths).cloned().collect();
            if !files.is_empty() {
                overlaps.push(Overlap {
                    tasks: [(*first).clone(), (*second).clone()],
                    files,
                });
            }
        }
    }
    Ok(overlaps)
}
