//! Ownership in the store: a change bumps the generation and journals it; a round sent under
//! an old generation, or by a commander the task does not admit, is refused in the
//! transaction that would start it, whoever wins the race.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_events::RoundStatus;
use ganger_store::{
    NewRound, NewTask, OwnerChange, OwnershipStore, ProcessRef, RoundEnd, RoundKind, SqliteStore,
    Store, StoreError, TaskUpdate,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn new_task(slug: &str) -> NewTask {
    NewTask {
        slug: slug.into(),
        agent: "opencode".into(),
        model: Some("mock/scripted".into()),
        base: "main".into(),
        base_commit: Some("0".repeat(40)),
        branch: format!("agent/{slug}"),
        worktree: PathBuf::from(format!("/tmp/repo-agent-{slug}")),
        worktree_made: true,
        owner: "alice".into(),
        keys: BTreeMap::new(),
        timeout_ms: None,
        stall_ms: Some(60_000),
        permission: "write".into(),
        sandbox: "local".into(),
        network: "shared".into(),
        rw: Vec::new(),
    }
}

fn new_round(kind: RoundKind, token: &str) -> NewRound {
    NewRound {
        kind,
        model: Some("mock/scripted".into()),
        session_before: None,
        commander: "alice".into(),
        token: token.into(),
        lock_path: PathBuf::from(format!("/tmp/{token}.lock")),
        host: Some(ProcessRef {
            pid: 42,
            start_ticks: 7,
        }),
        snapshot_before: None,
        checks: Vec::new(),
        generation: None,
    }
}

fn done() -> RoundEnd {
    RoundEnd {
        status: RoundStatus::Done,
        snapshot_before: None,
        reason: None,
        session: Some("s".into()),
        exit_code: Some(0),
        exit_signal: None,
        summary: Default::default(),
        snapshot_after: None,
        changed: Vec::new(),
        worktree_changes: Vec::new(),
        checks: Vec::new(),
    }
}

fn sent(by: &str, generation: i64, token: &str) -> NewRound {
    NewRound {
        commander: by.into(),
        generation: Some(generation),
        ..new_round(RoundKind::Fix, token)
    }
}

#[test]
fn a_transfer_bumps_the_generation_and_stale_or_foreign_rounds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
    let (task, first) = store
        .create_task(&new_task("t"), &new_round(RoundKind::Start, "r1"))
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
    // saw generation 1.
    match store.begin_round(task.id, &sent("alice", 1, "r2"), &TaskUpdate::default()) {
        Err(StoreError::Stale {
            sent: 1,
            now: 2,
            owner,
            ..
        }) => assert_eq!(owner, "bob"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        store.change_owner(task.id, 1, OwnerChange::Release, "alice"),
        Err(StoreError::Stale { .. })
    ));
    // Alice under the new generation is no longer admitted; Bob is.
    assert!(matches!(
        store.begin_round(task.id, &sent("alice", 2, "r3"), &TaskUpdate::default()),
        Err(StoreError::NotAllowed { .. })
    ));
    let round = store
        .begin_round(task.id, &sent("bob", 2, "r4"), &TaskUpdate::default())
        .unwrap();
    assert_eq!((round.number, round.commander.as_str()), (2, "bob"));

    let kinds: Vec<String> = store
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
            "round-started"
        ]
    );
}

#[test]
fn an_adopted_task_has_its_session_and_no_round() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
    let task = store.adopt_task(&new_task("a"), "ses_by_hand").unwrap();
    assert_eq!(task.session.as_deref(), Some("ses_by_hand"));
    assert_eq!(task.rounds, 0);
    assert!(store.rounds(task.id).unwrap().is_empty());
    assert!(matches!(
        store.adopt_task(&new_task("a"), "other"),
        Err(StoreError::SlugTaken(_))
    ));
    store.set_inbound(task.id, "hold", "alice").unwrap();
    assert_eq!(store.task("a").unwrap().unwrap().inbound, "hold");
}
