//! The queue's invariants as the store holds them, under races: one open start per slug
//! (racing `start --queue` commands), one open fleet item per slug (concurrent `fleet run`s
//! of one file), and a fleet refused a slug that another fleet's task (or a task of no
//! fleet) has, with nothing of it written.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_store::{
    Budget, EvidenceStore, FleetItem, FleetRecord, FleetSubmission, NewQueued, NewRound, NewTask,
    QueueKind, QueueState, QueueStore, RoundKind, SlugHolder, SqliteStore, Store, StoreError,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn open(dir: &Path) -> SqliteStore {
    SqliteStore::open(&dir.join("state.db")).unwrap()
}

fn queued(slug: &str, kind: QueueKind, fleet: Option<&str>) -> NewQueued {
    NewQueued {
        slug: slug.into(),
        kind,
        options: serde_json::json!({}),
        prompt_file: PathBuf::from(format!("/tmp/{slug}.md")),
        commander: "alice".into(),
        generation: None,
        fleet: fleet.map(Into::into),
        after: Vec::new(),
        not_before: 0,
    }
}

fn new_task(slug: &str) -> NewTask {
    NewTask {
        slug: slug.into(),
        agent: "command".into(),
        model: None,
        base: "main".into(),
        base_commit: None,
        branch: format!("agent/{slug}"),
        worktree: PathBuf::from(format!("/tmp/repo-agent-{slug}")),
        worktree_made: true,
        owner: "alice".into(),
        keys: BTreeMap::new(),
        timeout_ms: None,
        stall_ms: None,
        permission: "write".into(),
        sandbox: "local".into(),
        network: "shared".into(),
        rw: Vec::new(),
    }
}

fn new_round(token: &str) -> NewRound {
    NewRound {
        kind: RoundKind::Start,
        model: None,
        session_before: None,
        commander: "alice".into(),
        token: token.into(),
        lock_path: PathBuf::from(format!("/tmp/{token}.lock")),
        host: None,
        snapshot_before: None,
        checks: Vec::new(),
        generation: None,
    }
}

/// A submission of fleet `name` that starts each of `slugs` (none of which has a task).
fn starting(name: &str, slugs: &[&str]) -> FleetSubmission {
    FleetSubmission {
        fleet: FleetRecord {
            name: name.into(),
            file: Some(format!("{name}.toml")),
            limits: serde_json::json!({}),
            created_at: 1,
        },
        budget: Some(Budget {
            usd: Some(1.0),
            tokens: None,
        }),
        slugs: slugs.iter().map(|s| (*s).to_owned()).collect(),
        items: slugs
            .iter()
            .map(|slug| FleetItem {
                item: queued(slug, QueueKind::Start, Some(name)),
                rounds: None,
            })
            .collect(),
    }
}

#[test]
fn of_racing_queued_starts_of_one_slug_exactly_one_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    let barrier = std::sync::Barrier::new(10);
    let results: Vec<Result<_, StoreError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..10)
            .map(|_| {
                scope.spawn(|| {
                    let mut store = open(dir.path());
                    barrier.wait();
                    store.enqueue(&queued("q1", QueueKind::Start, None))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let accepted = results.iter().filter(|r| r.is_ok()).count();
    let refused: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(ToString::to_string))
        .collect();
    assert_eq!(accepted, 1, "{refused:?}");
    assert_eq!(refused, vec!["task q1 is queued already"; 9]);

    // Fixes of one task may queue up; a start may again once the first one is closed.
    let mut store = open(dir.path());
    store.enqueue(&queued("q1", QueueKind::Fix, None)).unwrap();
    store.enqueue(&queued("q1", QueueKind::Fix, None)).unwrap();
    let first = store.open_items().unwrap()[0].clone();
    assert_eq!(first.kind, QueueKind::Start);
    store
        .move_item(
            first.id,
            QueueState::Queued,
            QueueState::Refused,
            Some("no"),
            None,
        )
        .unwrap();
    store
        .enqueue(&queued("q1", QueueKind::Start, None))
        .unwrap();
}

#[test]
fn concurrent_submissions_of_one_fleet_queue_each_task_once() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    let slugs = ["a", "b", "c", "d"];
    let barrier = std::sync::Barrier::new(3);
    let results: Vec<Vec<Option<_>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    let mut store = open(dir.path());
                    barrier.wait();
                    store.submit_fleet(&starting("f", &slugs)).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let queued_per_run: Vec<usize> = results
        .iter()
        .map(|r| r.iter().filter(|i| i.is_some()).count())
        .collect();
    assert_eq!(
        queued_per_run.iter().sum::<usize>(),
        4,
        "{queued_per_run:?}"
    );
    let store = open(dir.path());
    let items = store.queue_items(Some("f")).unwrap();
    let mut per_slug: Vec<&str> = items.iter().map(|i| i.slug.as_str()).collect();
    per_slug.sort_unstable();
    assert_eq!(per_slug, slugs);

    // A task that was started or continued since the submitter looked is left alone.
    let mut store = open(dir.path());
    let (task, _) = store.create_task(&new_task("e"), &new_round("e1")).unwrap();
    store.set_task_fleet(task.id, Some("f")).unwrap();
    let mut stale = starting("f", &["e"]);
    stale.items[0].item.kind = QueueKind::Fix;
    stale.items[0].rounds = Some(0);
    assert_eq!(store.submit_fleet(&stale).unwrap(), vec![None]);
    stale.items[0].rounds = Some(1);
    assert!(store.submit_fleet(&stale).unwrap()[0].is_some());
    // The fleet's one open item per slug holds even against a direct insert.
    let again = store.enqueue(&queued("e", QueueKind::Fix, Some("f")));
    assert!(
        matches!(&again, Err(StoreError::AlreadyQueued(slug)) if slug == "e"),
        "{again:?}"
    );
}

#[test]
fn a_fleet_is_refused_a_slug_another_fleet_or_no_fleet_holds_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    store.submit_fleet(&starting("alpha", &["x"])).unwrap();
    // Alpha's x runs and ends: its task is alpha's.
    let (task, _) = store.create_task(&new_task("x"), &new_round("x1")).unwrap();
    store.set_task_fleet(task.id, Some("alpha")).unwrap();
    let item = store.open_items().unwrap()[0].id;
    store
        .move_item(item, QueueState::Queued, QueueState::Ended, None, Some(1))
        .unwrap();

    let refused = store.submit_fleet(&starting("beta", &["y", "x"]));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "task x belongs to fleet alpha; fleet beta cannot run a task of that slug"
    );
    assert_eq!(
        store
            .fleet_conflict("beta", &["y".into(), "x".into()])
            .unwrap(),
        Some(("x".into(), SlugHolder::Fleet("alpha".into())))
    );
    assert!(store.queue_items(Some("beta")).unwrap().is_empty());
    assert!(store.fleets().unwrap().iter().all(|f| f.name != "beta"));
    assert_eq!(store.fleet_budget("beta").unwrap(), Budget::default());
    // Alpha itself may come back to its own task.
    assert_eq!(store.fleet_conflict("alpha", &["x".into()]).unwrap(), None);

    // A task started by hand, and a start queued by hand, belong to no fleet.
    store
        .create_task(&new_task("hand"), &new_round("h1"))
        .unwrap();
    store
        .enqueue(&queued("later", QueueKind::Start, None))
        .unwrap();
    for slug in ["hand", "later"] {
        let refused = store.submit_fleet(&starting("beta", &[slug])).unwrap_err();
        assert!(
            matches!(&refused, StoreError::FleetConflict { holder: None, .. }),
            "{refused:?}"
        );
        assert_eq!(
            refused.to_string(),
            format!("task {slug} belongs to no fleet; fleet beta cannot run a task of that slug")
        );
    }
    // A start refused at delivery made no task: its slug is free again.
    let later = store.open_items().unwrap().last().unwrap().id;
    store
        .move_item(later, QueueState::Queued, QueueState::Refused, None, None)
        .unwrap();
    assert!(store.submit_fleet(&starting("beta", &["later"])).is_ok());
}
