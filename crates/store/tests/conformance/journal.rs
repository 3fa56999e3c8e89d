//! The journal: every change's entry in the order the changes were made, read on from any
//! entry (a cursor) a page at a time; a commander's own journal holds its tasks' entries and
//! the transfers it was part of, and its cursor only moves on.

use super::Site;
use super::fixtures::{done, end, new_round, new_task, summary};
use ganger_events::RoundStatus;
use ganger_store::{JournalEvent, OwnerMove, RoundKind, TaskUpdate};

pub fn the_journal_is_in_order_and_reads_on_from_a_cursor(site: &dyn Site) {
    let mut store = site.connect();
    let mut other = site.connect();
    let (a, a1) = store
        .create_task(
            &new_task("a", "alice"),
            &new_round(RoundKind::Start, "a1", "alice"),
        )
        .unwrap();
    // Two connections write in turn: the journal keeps the order of their changes.
    let (_, b1) = other
        .create_task(
            &new_task("b", "bob"),
            &new_round(RoundKind::Start, "b1", "bob"),
        )
        .unwrap();
    store.finish_round(a1.id, &done()).unwrap();
    other.request_cancel(b1.id, "bob").unwrap();
    store
        .begin_round(
            a.id,
            &new_round(RoundKind::Fix, "a2", "alice"),
            &TaskUpdate::default(),
        )
        .unwrap();
    store
        .record_merge(a.id, "alice", serde_json::json!({ "mode": "ff" }))
        .unwrap();
    let all = other.journal(0, 100).unwrap();
    let seen: Vec<(Option<String>, Option<u32>, String)> = all
        .iter()
        .map(|e| (e.slug.clone(), e.round, e.kind.clone()))
        .collect();
    let entry = |slug: &str, round: Option<u32>, kind: &str| {
        (Some(slug.to_owned()), round, kind.to_owned())
    };
    assert_eq!(
        seen,
        [
            entry("a", None, "task-created"),
            entry("a", Some(1), "round-started"),
            entry("b", None, "task-created"),
            entry("b", Some(1), "round-started"),
            entry("a", Some(1), "round-finished"),
            entry("b", Some(1), "cancel-requested"),
            entry("a", Some(2), "round-started"),
            entry("a", None, "merged"),
        ]
    );
    assert!(
        all.windows(2)
            .all(|w| w[0].id < w[1].id && w[0].at <= w[1].at)
    );
    assert_eq!(all[7].detail["mode"], "ff");
    assert_eq!(all[2].commander.as_deref(), Some("bob"));
    // Read on from a cursor, a page at a time: the same entries, none twice.
    let mut cursor = 0;
    let mut paged = Vec::new();
    loop {
        let page = store.journal(cursor, 3).unwrap();
        assert!(page.len() <= 3);
        let Some(last) = page.last() else { break };
        cursor = last.id;
        paged.extend(page);
    }
    assert_eq!(paged, all);
    assert_eq!(store.last_journal_id().unwrap(), all[7].id);
    assert!(store.journal(all[7].id, 100).unwrap().is_empty());
}

pub fn a_commanders_journal_holds_its_tasks_and_its_cursor_only_moves_on(site: &dyn Site) {
    let mut store = site.connect();
    let (mine, m1) = store
        .create_task(
            &new_task("mine", "boss"),
            &new_round(RoundKind::Start, "m1", "boss"),
        )
        .unwrap();
    let (theirs, _) = store
        .create_task(
            &new_task("theirs", "other"),
            &new_round(RoundKind::Start, "t1", "other"),
        )
        .unwrap();
    store
        .finish_round(
            m1.id,
            &end(RoundStatus::Done, "ses", summary(1, None, Some("DONE: ok"))),
        )
        .unwrap();
    store
        .add_journal(
            theirs.id,
            None,
            Some("other"),
            &JournalEvent::Transferred(OwnerMove {
                from: "other".into(),
                to: "boss".into(),
                generation: theirs.generation,
            }),
        )
        .unwrap();
    let id = store
        .add_journal(
            mine.id,
            Some(1),
            Some("boss"),
            &JournalEvent::Overlap { with: Vec::new() },
        )
        .unwrap();
    let reader = site.connect();
    let kinds = |who: &str, after: i64| -> Vec<(String, String)> {
        reader
            .commander_journal(who, after, 100)
            .unwrap()
            .into_iter()
            .map(|e| (e.slug.unwrap(), e.kind))
            .collect()
    };
    let pair = |slug: &str, kind: &str| (slug.to_owned(), kind.to_owned());
    assert_eq!(
        kinds("boss", 0),
        [
            pair("mine", "task-created"),
            pair("mine", "round-finished"),
            pair("theirs", "transferred"),
            pair("mine", "overlap"),
        ]
    );
    assert_eq!(
        kinds("other", 0),
        [
            pair("theirs", "task-created"),
            pair("theirs", "transferred")
        ]
    );
    let finished = reader
        .commander_journal("boss", 0, 100)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == "round-finished")
        .unwrap();
    assert_eq!(finished.detail["done"], "DONE: ok");

    assert_eq!(store.journal_cursor("boss").unwrap(), 0);
    assert_eq!(store.ack_journal("boss", id - 1).unwrap(), id - 1);
    assert_eq!(store.ack_journal("boss", 1).unwrap(), id - 1);
    assert_eq!(reader.journal_cursor("boss").unwrap(), id - 1);
    assert_eq!(reader.journal_cursor("other").unwrap(), 0);
    assert_eq!(kinds("boss", id - 1), [pair("mine", "overlap")]);
    assert_eq!(reader.last_journal_id().unwrap(), id);
}
