//! The SQLite store against the Store contract: creation, one running round per task under
//! real concurrency, ending a round exactly once, and schema versions.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_events::{RoundStatus, RoundSummary};
use ganger_store::{
    NewRound, NewTask, ProcessRef, RoundEnd, RoundKind, SqliteStore, Store, StoreError, TaskUpdate,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Barrier};

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

fn end(status: RoundStatus, session: &str, cost: f64) -> RoundEnd {
    RoundEnd {
        status,
        snapshot_before: None,
        reason: None,
        session: Some(session.into()),
        exit_code: Some(0),
        exit_signal: None,
        summary: RoundSummary {
            cost_usd: Some(cost),
            ..RoundSummary::default()
        },
        snapshot_after: Some("1".repeat(40)),
        changed: vec!["A hello.txt".into()],
        worktree_changes: vec!["A hello.txt".into()],
        checks: Vec::new(),
    }
}

fn open(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(&dir.path().join("state.db")).unwrap()
}

#[test]
fn a_task_and_its_rounds_are_kept_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir);
    let (task, round) = store
        .create_task(&new_task("t1"), &new_round(RoundKind::Start, "a"))
        .unwrap();
    assert_eq!(
        (task.rounds, task.last_status),
        (1, Some(RoundStatus::Running))
    );
    assert_eq!((round.number, round.status), (1, RoundStatus::Running));
    assert!(matches!(
        store.create_task(&new_task("t1"), &new_round(RoundKind::Start, "b")),
        Err(StoreError::SlugTaken(slug)) if slug == "t1"
    ));
    assert!(
        store
            .finish_round(round.id, &end(RoundStatus::Done, "ses_1", 0.25))
            .unwrap()
    );
    // A round ends once: a late observer cannot overwrite the host's verdict.
    assert!(
        !store
            .finish_round(round.id, &end(RoundStatus::Interrupted, "ses_x", 9.0))
            .unwrap()
    );
    let update = TaskUpdate {
        model: Some("mock/other".into()),
        keys: BTreeMap::from([("mock".to_owned(), PathBuf::from("/keys/mock"))]),
        new_session: false,
    };
    let second = store
        .begin_round(task.id, &new_round(RoundKind::Fix, "c"), &update)
        .unwrap();
    assert_eq!(second.number, 2);
    let task = store.task("t1").unwrap().unwrap();
    assert_eq!(task.session.as_deref(), Some("ses_1"));
    assert_eq!(task.model.as_deref(), Some("mock/other"));
    assert_eq!(task.keys.get("mock"), Some(&PathBuf::from("/keys/mock")));
    assert_eq!(task.cost_usd, 0.25);
    assert_eq!(
        store.round(task.id, Some(1)).unwrap().unwrap().changed,
        ["A hello.txt"]
    );
    assert_eq!(store.round(task.id, None).unwrap().unwrap().id, second.id);
    assert_eq!(store.running_rounds().unwrap().len(), 1);
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
            "round-started"
        ]
    );
}

#[test]
fn a_busy_task_refuses_a_second_round_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir);
    let (task, _) = store
        .create_task(&new_task("t1"), &new_round(RoundKind::Start, "a"))
        .unwrap();
    let update = TaskUpdate {
        model: Some("mock/other".into()),
        keys: BTreeMap::new(),
        new_session: false,
    };
    let refused = store.begin_round(task.id, &new_round(RoundKind::Fix, "b"), &update);
    assert!(matches!(
        refused,
        Err(StoreError::Busy {
            number: 1,
            host_pid: Some(42),
            ..
        })
    ));
    assert_eq!(
        store.task("t1").unwrap().unwrap().model.as_deref(),
        Some("mock/scripted")
    );
}

#[test]
fn of_many_concurrent_fixes_exactly_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let task_id = {
        let mut store = open(&dir);
        let (task, round) = store
            .create_task(&new_task("t1"), &new_round(RoundKind::Start, "a"))
            .unwrap();
        store
            .finish_round(round.id, &end(RoundStatus::Done, "s", 0.0))
            .unwrap();
        task.id
    };
    let racers = 8;
    let barrier = Arc::new(Barrier::new(racers));
    let handles: Vec<_> = (0..racers)
        .map(|n| {
            let barrier = Arc::clone(&barrier);
            let path = dir.path().join("state.db");
            std::thread::spawn(move || {
                let mut store = SqliteStore::open(&path).unwrap();
                barrier.wait();
                store.begin_round(
                    task_id,
                    &new_round(RoundKind::Fix, &format!("r{n}")),
                    &TaskUpdate::default(),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let started = results.iter().filter(|r| r.is_ok()).count();
    let busy = results
        .iter()
        .filter(|r| matches!(r, Err(StoreError::Busy { .. })))
        .count();
    assert_eq!((started, busy), (1, racers - 1), "{results:?}");
}

#[test]
fn cancel_is_requested_only_on_a_running_round() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir);
    let (_, round) = store
        .create_task(&new_task("t1"), &new_round(RoundKind::Start, "a"))
        .unwrap();
    assert!(store.request_cancel(round.id, "bob").unwrap());
    assert!(
        store
            .finish_round(round.id, &end(RoundStatus::Cancelled, "s", 0.0))
            .unwrap()
    );
    assert!(!store.request_cancel(round.id, "bob").unwrap());
}

#[test]
fn a_database_from_a_newer_ganger_is_refused_and_reopening_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(&dir));
    drop(open(&dir));
    let conn = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
    conn.pragma_update(None, "user_version", SqliteStore::schema_version() + 1)
        .unwrap();
    drop(conn);
    assert!(matches!(
        SqliteStore::open(&dir.path().join("state.db")),
        Err(StoreError::TooNew { .. })
    ));
}

#[test]
fn a_cleaned_task_keeps_its_record_and_says_when_it_was_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir);
    let (task, _) = store
        .create_task(&new_task("t1"), &new_round(RoundKind::Start, "a"))
        .unwrap();
    assert_eq!(task.cleaned_at, None);
    store
        .mark_cleaned(
            task.id,
            "alice",
            serde_json::json!({"removed": ["worktree"]}),
        )
        .unwrap();
    let task = store.task("t1").unwrap().unwrap();
    assert!(task.cleaned_at.is_some_and(|at| at > 0));
    let last = store.journal(0, 100).unwrap().pop().unwrap();
    assert_eq!(
        (last.kind.as_str(), last.commander.as_deref()),
        ("cleaned", Some("alice"))
    );
}
