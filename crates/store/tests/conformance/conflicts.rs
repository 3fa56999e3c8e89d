//! Predicted conflicts: a pair is kept until a round of either task finds it gone, journaled
//! once when it appears and once when it is cleared, whichever task's round records it.

use super::Site;
use super::fixtures::new_task;
use ganger_store::{ConflictFile, PredictedConflict};

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
