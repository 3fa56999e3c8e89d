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
    let mine = changed_paths(&round.worktree_changes);
    let Some(snapshot) = round.snapshot_after.as_deref().filter(|_| !mine.is_empty()) else {
        return Ok(Vec::new());
    };
    let repo = &ws.repo;
    // Each merge to make: with whom (`None`: the base), ours, theirs. All of them go through
    // one `git merge-tree --stdin`: one process per pair cost more than the merges themselves.
    let mut merges: Vec<(Option<String>, String, String)> = Vec::new();
    if let Some(head) = repo.resolve(&format!("refs/heads/{}", task.base)) {
        // A base the snapshot already has merges cleanly: no need to ask git first.
        merges.push((None, head, snapshot.to_owned()));
    }
    for other in store.open_snapshots(task.id, &task.base)? {
        if changed_paths(&other.changes).is_disjoint(&mine)
            || rivals(store, &task.slug, &other.slug)?
        {
            continue;
        }
        merges.push((Some(other.slug), snapshot.to_owned(), other.snapshot));
    }
    let pairs: Vec<(&str, &str)> = merges
        .iter()
        .map(|(_, ours, theirs)| (ours.as_str(), theirs.as_str()))
        .collect();
    let merged = repo.merge_tree_pairs(&pairs)?;
    let found = merges
        .into_iter()
        .zip(merged)
        .filter(|(_, merged)| !merged.conflicts.is_empty())
        .map(|((with, _, _), merged)| {
            let files = files(repo, &merged);
            match with {
                None => PredictedConflict {
                    task: task.slug.clone(),
                    other: task.base.clone(),
                    with_base: true,
                    files,
                },
                Some(slug) => {
                    let (first, second) = if task.slug < slug {
                        (task.slug.clone(), slug)
                    } else {
                        (slug, task.slug.clone())
                    };
                    PredictedConflict {
                        task: first,
                        other: second,
                        with_base: false,
                        files,
                    }
                }
            }
        })
        .collect();
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
