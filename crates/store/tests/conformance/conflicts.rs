//! Predicted conflicts: a pair is kept until a round of either task finds it gone, journaled
//! once when it appears and once when it is cleared, whichever task's round records it.

use super::Site;
use super::fixtures::{done, end, new_round, new_task, summary};
use ganger_events::RoundStatus;
use ganger_store::{ConflictFile, OpenSnapshot, PredictedConflict, RoundKind, TaskUpdate};

fn pair(a: &str, b: &str, with_base: bool, lines: [u32; 2]) -> PredictedConflict {
    PredictedConflict {
        task: a.into(),
        other: b.into(),
        with_base,
        files: vec![ConflictFile {
            path: "src/a.rs".into(),
            lines: vec![lines],
        }],
    }
}

pub fn a_conflict_is_journaled_once_kept_while_found_and_cleared_by_either_task(site: &dyn Site) {
    let mut store = site.connect();
    let t1 = store.create_bare_task(&new_task("t1", "alice")).unwrap();
    let t2 = store.create_bare_task(&new_task("t2", "alice")).unwrap();
    let found = [
        pair("t1", "t2", false, [10, 24]),
        pair("t2", "main", true, [1, 3]),
    ];
    store
        .record_conflicts(t2.id, "t2", Some(1), Some("alice"), &found)
        .unwrap();
    // Found again with other lines: kept, not journaled again.
    let again = [
        pair("t1", "t2", false, [11, 25]),
        pair("t2", "main", true, [1, 3]),
    ];
    store
        .record_conflicts(t2.id, "t2", Some(1), Some("alice"), &again)
        .unwrap();
    assert_eq!(site.connect().conflicts().unwrap(), again);
    // t1's round no longer conflicts with t2: cleared; t2's conflict with its base stays.
    store
        .record_conflicts(t1.id, "t1", Some(2), Some("alice"), &[])
        .unwrap();
    assert_eq!(store.conflicts().unwrap(), [again[1].clone()]);
    let kinds: Vec<(String, String)> = store
        .journal(0, 100)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.starts_with("conflict"))
        .map(|e| (e.kind, e.slug.unwrap_or_default()))
        .collect();
    let expected = [
        ("conflict", "t2"),
        ("conflict", "t2"),
        ("conflict-cleared", "t1"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(k, s)| ((*k).to_owned(), (*s).to_owned()))
        .collect();
    assert_eq!(kinds, expected);
}

pub fn the_open_snapshots_of_a_base_are_the_last_ended_rounds_of_its_other_open_tasks(
    site: &dyn Site,
) {
    let mut store = site.connect();
    let begin = |store: &mut Box<dyn ganger_store::Backend>, slug: &str, base: &str| {
        let mut task = new_task(slug, "alice");
        task.base = base.into();
        let (task, round) = store
            .create_task(&task, &new_round(RoundKind::Start, slug, "alice"))
            .unwrap();
        (task, round)
    };
    let (me, mine) = begin(&mut store, "me", "main");
    store.finish_round(mine.id, &done()).unwrap();
    // Ended with a snapshot: listed; then a second round runs: its last ended one still is.
    let (busy, first) = begin(&mut store, "busy", "main");
    store.finish_round(first.id, &done()).unwrap();
    store
        .begin_round(
            busy.id,
            &new_round(RoundKind::Fix, "busy-2", "alice"),
            &TaskUpdate::default(),
        )
        .unwrap();
    // Another base, a round still running, a round that left nothing: none is listed.
    let (_, elsewhere) = begin(&mut store, "elsewhere", "dev");
    store.finish_round(elsewhere.id, &done()).unwrap();
    begin(&mut store, "running", "main");
    let (_, clean) = begin(&mut store, "clean", "main");
    let mut nothing = end(RoundStatus::Done, "ses_2", summary(1, None, None));
    nothing.worktree_changes.clear();
    store.finish_round(clean.id, &nothing).unwrap();
    let found = site.connect().open_snapshots(me.id, "main").unwrap();
    assert_eq!(
        found,
        [OpenSnapshot {
            slug: "busy".into(),
            changes: vec!["A hello.txt".into()],
            snapshot: "1".repeat(40),
        }]
    );
    assert_eq!(store.open_snapshots(busy.id, "main").unwrap().len(), 1);
}
