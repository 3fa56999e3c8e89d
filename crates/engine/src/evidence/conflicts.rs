//! Conflicts seen while tasks still run: at a round's end, its snapshot is merged in memory
//! (`git merge-tree --write-tree`) with the last snapshot of every other open task on the same
//! base whose changes share a path with it, and with the base's head. A file both change on
//! different lines merges and is not a conflict; one they change on the same lines is, with
//! the lines of each conflicting hunk in the merged file. What is found replaces what the store
//! knew of the task's pairs: a new pair is journaled once, a pair gone is cleared.

use crate::env::workspace::Workspace;
use ganger_git::{Repo, TreeMerge};
use ganger_store::{Backend, ConflictFile, PredictedConflict, Round, Task};
use std::collections::BTreeSet;

/// The paths of a listing of changes, `"M path"` (a snapshot's) or `"XY path"` (`git
/// status --short`'s), both sides of a rename.
pub(crate) fn changed_paths(listing: &[String]) -> BTreeSet<&str> {
    listing
        .iter()
        .filter_map(|line| {
            let skip = if line.as_bytes().get(1) == Some(&b' ') {
                2
            } else {
                3
            };
            line.get(skip..).map(str::trim_start)
        })
        .flat_map(|path| path.split(" -> "))
        .collect()
}

/// The lines (first and last, 1-based) of each conflict's markers in a merged file.
pub(crate) fn marker_lines(text: &str) -> Vec<[u32; 2]> {
    let mut found = Vec::new();
    let mut open = None;
    for (index, line) in text.lines().enumerate() {
        let number = index as u32 + 1;
        if line.starts_with("<<<<<<< ") && open.is_none() {
            open = Some(number);
        } else if line.starts_with(">>>>>>> ")
            && let Some(first) = open.take()
        {
            found.push([first, number]);
        }
    }
    found
}

/// Records the conflicts of `task`'s ended `round` with the other open tasks of its base and
/// with the base's head. A failure here is never the round's: the pairs stay as they were.
pub(crate) fn predict(ws: &Workspace, store: &mut dyn Backend, task: &Task, round: &Round) {
    if task.parent.is_some() {
        return;
    }
    if let Ok(found) = find(ws, &*store, task, round) {
        let _ = store.record_conflicts(
            task.id,
            &task.slug,
            Some(round.number),
            Some(&round.commander),
            &found,
        );
    }
}

fn find(
    ws: &Workspace,
    store: &dyn Backend,
    task: &Task,
    round: &Round,
) -> crate::base::error::Result<Vec<PredictedConflict>> {
    let mut found = Vec::new();
    let mine = changed_paths(&round.worktree_changes);
    let Some(snapshot) = round.snapshot_after.as_deref().filter(|_| !mine.is_empty()) else {
        return Ok(found);
    };
    let repo = &ws.repo;
    if let Some(head) = repo.resolve(&format!("refs/heads/{}", task.base))
        && !repo.is_ancestor(&head, snapshot)?
    {
        let merged = repo.merge_trees(&head, snapshot, None)?;
        if !merged.conflicts.is_empty() {
            found.push(PredictedConflict {
                task: task.slug.clone(),
                other: task.base.clone(),
                with_base: true,
                files: files(repo, &merged),
            });
        }
    }
    for (slug, changes) in store.open_work(task.id)? {
        if changed_paths(&changes).is_disjoint(&mine) || rivals(store, &task.slug, &slug)? {
            continue;
        }
        let Some(other) = store.task(&slug)?.filter(|o| o.base == task.base) else {
            continue;
        };
        let Some(theirs) = store.round(other.id, None)?.and_then(|r| r.snapshot_after) else {
            continue;
        };
        let merged = repo.merge_trees(snapshot, &theirs, None)?;
        if merged.conflicts.is_empty() {
            continue;
        }
        let (first, second) = if task.slug < slug {
            (task.slug.clone(), slug)
        } else {
            (slug, task.slug.clone())
        };
        found.push(PredictedConflict {
            task: first,
            other: second,
            with_base: false,
            files: files(repo, &merged),
        });
    }
    Ok(found)
}

/// Whether `a` and `b` are attempts of one race (`RACE.N`, `ganger race`): alternatives to
/// one another, of which one is merged, so that their overlap is no conflict to report.
fn rivals(store: &dyn Backend, a: &str, b: &str) -> crate::base::error::Result<bool> {
    let race_of = |slug: &str| {
        slug.rsplit_once('.')
            .filter(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
            .map(|(race, _)| race.to_owned())
    };
    match (race_of(a), race_of(b)) {
        (Some(x), Some(y)) if x == y => Ok(store.race(&x)?.is_some()),
        _ => Ok(false),
    }
}

/// The conflicting files of a merge, each with the lines of its markers in the merged tree.
fn files(repo: &Repo, merged: &TreeMerge) -> Vec<ConflictFile> {
    merged
        .conflicts
        .iter()
        .map(|path| {
            let text = ganger_git::Git::new(&repo.worktree)
                .run(["cat-file", "-p", &format!("{}:{path}", merged.tree)])
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default();
            ConflictFile {
                path: path.clone(),
                lines: marker_lines(&text),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_gives_its_paths_with_both_sides_of_a_rename() {
        let listing = vec![
            "M src/a.rs".to_owned(),
            "R old.rs -> new.rs".to_owned(),
            "A b".to_owned(),
            "?? c".to_owned(),
            "A  d".to_owned(),
        ];
        let found: Vec<&str> = changed_paths(&listing).into_iter().collect();
        assert_eq!(found, ["b", "c", "d", "new.rs", "old.rs", "src/a.rs"]);
    }

    #[test]
    fn each_conflicts_markers_give_its_lines() {
        let cases: [(&str, Vec<[u32; 2]>); 3] = [
            ("a\nb\n", vec![]),
            (
                "a\n<<<<<<< x\nb\n=======\nc\n>>>>>>> y\nd\n<<<<<<< x\ne\n=======\n>>>>>>> y\n",
                vec![[2, 6], [8, 11]],
            ),
            ("<<<<<<< x\nunclosed\n", vec![]),
        ];
        for (text, lines) in cases {
            assert_eq!(marker_lines(text), lines, "{text:?}");
        }
    }
}
