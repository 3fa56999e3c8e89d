//! Tasks and their rounds: what is kept and listed, at most one running round per task (also
//! when many connections race to begin one), a round that ends exactly once, cancel requests
//! and cleaned tasks.

use super::Site;
use super::fixtures::{done, end, new_round, new_task, summary};
use ganger_events::RoundStatus;
use ganger_store::{Move, RoundKind, StoreError, TaskUpdate};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Barrier;

pub fn a_task_and_its_rounds_are_kept_and_listed(site: &dyn Site) {
    let mut store = site.connect();
    let (task, round) = store
        .create_task(
            &new_task("t1", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    assert_eq!(
        (task.rounds, task.last_status),
        (1, Some(RoundStatus::Running))
    );
    assert_eq!((round.number, round.status), (1, RoundStatus::Running));
    assert!(matches!(
        store.create_task(&new_task("t1", "alice"), &new_round(RoundKind::Start, "b", "alice")),
        Err(StoreError::SlugTaken(slug)) if slug == "t1"
    ));
    assert!(
        store
            .finish_round(
                round.id,
                &end(RoundStatus::Done, "ses_1", summary(1, Some(0.25), None))
            )
            .unwrap()
    );
    let update = TaskUpdate {
        model: Some("mock/other".into()),
        keys: BTreeMap::from([("mock".to_owned(), PathBuf::from("/keys/mock"))]),
        new_session: false,
    };
    let second = store
        .begin_round(task.id, &new_round(RoundKind::Fix, "c", "alice"), &update)
        .unwrap();
    assert_eq!(second.number, 2);
    // Another connection sees all of it.
    let other = site.connect();
    let task = other.task("t1").unwrap().unwrap();
    assert_eq!(task.session.as_deref(), Some("ses_1"));
    assert_eq!(task.model.as_deref(), Some("mock/other"));
    assert_eq!(task.keys.get("mock"), Some(&PathBuf::from("/keys/mock")));
    assert_eq!(task.cost_usd, 0.25);
    let first = other.round(task.id, Some(1)).unwrap().unwrap();
    assert_eq!(first.changed, ["A hello.txt"]);
    assert_eq!(first.claim, new_round(RoundKind::Start, "a", "alice").claim);
    assert_eq!(other.round(task.id, None).unwrap().unwrap().id, second.id);
    let numbers: Vec<u32> = other
        .rounds(task.id)
        .unwrap()
        .iter()
        .map(|r| r.number)
        .collect();
    assert_eq!(numbers, [1, 2]);
    let running = other.running_rounds().unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!((running[0].0.id, running[0].1.id), (task.id, second.id));
    let summaries = other.task_summaries().unwrap();
    assert_eq!(summaries.len(), 1);
    assert_eq!((summaries[0].slug.as_str(), summaries[0].rounds), ("t1", 2));
}

pub fn a_busy_task_refuses_a_second_round_and_changes_nothing(site: &dyn Site) {
    let mut store = site.connect();
    let (task, _) = store
        .create_task(
            &new_task("t1", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    let update = TaskUpdate {
        model: Some("mock/other".into()),
        keys: BTreeMap::new(),
        new_session: false,
    };
    let refused = store.begin_round(task.id, &new_round(RoundKind::Fix, "b", "alice"), &update);
    assert!(
        matches!(
            refused,
            Err(StoreError::Busy {
                number: 1,
                host_pid: Some(42),
                ..
            })
        ),
        "{refused:?}"
    );
    let task = store.task("t1").unwrap().unwrap();
    assert_eq!(task.model.as_deref(), Some("mock/scripted"));
    assert_eq!(task.rounds, 1);
    assert_eq!(store.rounds(task.id).unwrap().len(), 1);
}

pub fn of_racing_rounds_of_one_task_from_many_connections_exactly_one_starts(site: &dyn Site) {
    let task_id = {
        let mut store = site.connect();
        let (task, round) = store
            .create_task(
                &new_task("t1", "alice"),
                &new_round(RoundKind::Start, "a", "alice"),
            )
            .unwrap();
        store.finish_round(round.id, &done()).unwrap();
        task.id
    };
    let racers = 8;
    let barrier = Barrier::new(racers);
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..racers)
            .map(|n| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let mut store = site.connect();
                    barrier.wait();
                    store.begin_round(
                        task_id,
                        &new_round(RoundKind::Fix, &format!("r{n}"), "alice"),
                        &TaskUpdate::default(),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let started = results.iter().filter(|r| r.is_ok()).count();
    let busy = results
        .iter()
        .filter(|r| matches!(r, Err(StoreError::Busy { .. })))
        .count();
    assert_eq!((started, busy), (1, racers - 1), "{results:?}");
    let store = site.connect();
    let running: Vec<u32> = store
        .running_rounds()
        .unwrap()
        .iter()
        .map(|(_, r)| r.number)
        .collect();
    assert_eq!(running, [2]);
}

pub fn a_round_ends_once_and_cancel_asks_only_a_running_round(site: &dyn Site) {
    let mut host = site.connect();
    let mut observer = site.connect();
    let (task, round) = host
        .create_task(
            &new_task("t1", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    assert!(observer.request_cancel(round.id, "bob").unwrap());
    assert!(
        host.round(task.id, Some(1))
            .unwrap()
            .unwrap()
            .cancel_requested
    );
    assert!(
        host.finish_round(
            round.id,
            &end(RoundStatus::Cancelled, "ses_1", summary(1, Some(0.5), None))
        )
        .unwrap()
    );
    // A late observer (a reaper that took the host for dead) cannot overwrite the end.
    assert!(
        !observer
            .finish_round(
                round.id,
                &end(
                    RoundStatus::Interrupted,
                    "ses_x",
                    summary(1, Some(9.0), None)
                )
            )
            .unwrap()
    );
    assert!(!observer.request_cancel(round.id, "bob").unwrap());
    let ended = observer.round(task.id, Some(1)).unwrap().unwrap();
    assert_eq!(
        (ended.status, ended.session.as_deref()),
        (RoundStatus::Cancelled, Some("ses_1"))
    );
    assert_eq!(observer.task("t1").unwrap().unwrap().cost_usd, 0.5);
    // A progress report after the end changes nothing either.
    observer
        .record_progress(round.id, &summary(999, None, None), 1)
        .unwrap();
    let after = observer.round(task.id, Some(1)).unwrap().unwrap();
    assert_eq!(after.summary, ended.summary);
    let kinds: Vec<String> = observer
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
            "cancel-requested",
            "round-finished"
        ]
    );
}

pub fn a_cleaned_task_keeps_its_record_and_says_when_it_was_cleaned(site: &dyn Site) {
    let mut store = site.connect();
    let (task, _) = store
        .create_task(
            &new_task("t1", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
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
    assert_eq!(last.detail["removed"], serde_json::json!(["worktree"]));
}

pub fn a_moved_worktree_is_where_the_task_is_found_next(site: &dyn Site) {
    let mut store = site.connect();
    let (task, round) = store
        .create_task(
            &new_task("t1", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    store.finish_round(round.id, &done()).unwrap();
    assert_eq!(
        store.task("t1").unwrap().unwrap().session.as_deref(),
        Some("ses_1")
    );
    // Moved with its session (none of this store's business how): the session stays.
    let first = std::path::PathBuf::from("/srv/worker-2/repo-agent-t1");
    assert_ne!(task.worktree, first);
    store
        .move_worktree(
            task.id,
            &Move {
                worktree: first.clone(),
                resume_note: None,
                commander: "worker-2".into(),
                detail: serde_json::json!({"host": "worker-2"}),
            },
        )
        .unwrap();
    let other = site.connect();
    let moved = other.task("t1").unwrap().unwrap();
    assert_eq!((&moved.worktree, moved.worktree_made), (&first, true));
    assert_eq!(moved.session.as_deref(), Some("ses_1"));
    assert_eq!(other.task_summaries().unwrap()[0].worktree, first);
    // Moved without it: the session goes, the next round begins with the note.
    let second = std::path::PathBuf::from("/srv/worker-3/repo-agent-t1");
    store
        .move_worktree(
            task.id,
            &Move {
                worktree: second.clone(),
                resume_note: Some("earlier rounds: ...".into()),
                commander: "worker-3".into(),
                detail: serde_json::json!({"host": "worker-3"}),
            },
        )
        .unwrap();
    let moved = other.task("t1").unwrap().unwrap();
    assert_eq!(
        (
            &moved.worktree,
            moved.session.as_deref(),
            moved.resume_note.as_deref()
        ),
        (&second, None, Some("earlier rounds: ..."))
    );
    assert_eq!((moved.generation, moved.rounds), (task.generation, 1));
    let journal = other.journal(0, 100).unwrap();
    let moves: Vec<_> = journal
        .iter()
        .filter(|e| e.kind == "moved")
        .map(|e| (e.commander.as_deref(), e.detail["host"].as_str()))
        .collect();
    assert_eq!(
        moves,
        [
            (Some("worker-2"), Some("worker-2")),
            (Some("worker-3"), Some("worker-3"))
        ]
    );
}
