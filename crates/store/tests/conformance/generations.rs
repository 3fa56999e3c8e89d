//! Ownership in the store: a change bumps the task's generation and journals it; a round sent
//! under an old generation (`Stale`), or by a commander the task does not admit
//! (`NotAllowed`), is refused in the transaction that would start it, whoever wins the race.

use super::Site;
use super::fixtures::{done, new_round, new_task};
use ganger_store::{NewRound, OwnerChange, RoundKind, StoreError, TaskUpdate};

fn sent(by: &str, generation: i64, token: &str) -> NewRound {
    NewRound {
        generation: Some(generation),
        ..new_round(RoundKind::Fix, token, by)
    }
}

pub fn a_transfer_bumps_the_generation_and_stale_or_foreign_rounds_are_refused(site: &dyn Site) {
    let mut store = site.connect();
    let (task, first) = store
        .create_task(
            &new_task("t", "alice"),
            &new_round(RoundKind::Start, "r1", "alice"),
        )
        .unwrap();
    assert_eq!((task.owner.as_str(), task.generation), ("alice", 1));
    assert_eq!(task.inbound, "accept");
    store.finish_round(first.id, &done()).unwrap();
    store
        .set_allowed(task.id, &["dave".to_owned()], "alice")
        .unwrap();
    let moved = store
        .change_owner(task.id, 1, OwnerChange::Transfer { to: "bob" }, "alice")
        .unwrap();
    assert_eq!((moved.owner.as_str(), moved.generation), ("bob", 2));
    assert!(
        moved.allowed.is_empty(),
        "a new owner starts with no one allowed"
    );
    // Alice's round, sent under generation 1, is refused, and so is a second transfer that
    // saw generation 1 (from another connection: the store holds it, not a process).
    let mut other = site.connect();
    match other.begin_round(task.id, &sent("alice", 1, "r2"), &TaskUpdate::default()) {
        Err(StoreError::Stale {
            sent: 1,
            now: 2,
            owner,
            ..
        }) => assert_eq!(owner, "bob"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        other.change_owner(task.id, 1, OwnerChange::Release, "alice"),
        Err(StoreError::Stale { .. })
    ));
    // Alice under the new generation is no longer admitted; Bob is.
    assert!(matches!(
        other.begin_round(task.id, &sent("alice", 2, "r3"), &TaskUpdate::default()),
        Err(StoreError::NotAllowed { .. })
    ));
    let round = other
        .begin_round(task.id, &sent("bob", 2, "r4"), &TaskUpdate::default())
        .unwrap();
    assert_eq!((round.number, round.commander.as_str()), (2, "bob"));
    // A round ganger starts itself (no generation) is not checked.
    other.finish_round(round.id, &done()).unwrap();
    other
        .begin_round(
            task.id,
            &new_round(RoundKind::Fix, "r5", "alice"),
            &TaskUpdate::default(),
        )
        .unwrap();
    let kinds: Vec<String> = other
        .journal(0, 100)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "task-created",
            "round-started",
            "round-finished",
            "allowed",
            "transferred",
            "round-started",
            "round-finished",
            "round-started"
        ]
    );
}

pub fn an_adopted_task_has_its_session_and_no_round(site: &dyn Site) {
    let mut store = site.connect();
    let task = store
        .adopt_task(&new_task("a", "alice"), "ses_by_hand")
        .unwrap();
    assert_eq!(task.session.as_deref(), Some("ses_by_hand"));
    assert_eq!(task.rounds, 0);
    assert!(store.rounds(task.id).unwrap().is_empty());
    assert!(matches!(
        store.adopt_task(&new_task("a", "alice"), "other"),
        Err(StoreError::SlugTaken(_))
    ));
    store.set_inbound(task.id, "hold", "alice").unwrap();
    assert_eq!(store.task("a").unwrap().unwrap().inbound, "hold");
}
