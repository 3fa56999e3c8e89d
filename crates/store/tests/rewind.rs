//! Rewinding a task in the store: later rounds marked (and only once), the task's session and
//! next-round note replaced, the journal told, and a running round refusing it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_events::{RoundStatus, RoundSummary};
use ganger_store::{
    ForkPoint, NewRound, NewTask, Rewind, RoundEnd, RoundKind, SqliteStore, Store, StoreError,
    TaskUpdate,
};
use std::path::PathBuf;

fn new_task() -> NewTask {
    NewTask {
        slug: "t".into(),
        agent: "opencode".into(),
        model: None,
        base: "main".into(),
        base_commit: None,
        branch: "agent/t".into(),
        worktree: PathBuf::from("/tmp/repo-agent-t"),
        worktree_made: true,
        owner: "alice".into(),
        keys: Default::default(),
        timeout_ms: None,
        stall_ms: None,
        permission: "write".into(),
        sandbox: "local".into(),
        network: "shared".into(),
        rw: Vec::new(),
    }
}

fn new_round(kind: RoundKind, token: &str) -> NewRound {
    NewRound {
        kind,
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

fn done(round_id: i64, store: &mut SqliteStore, status: RoundStatus) {
    let end = RoundEnd {
        status,
        snapshot_before: None,
        reason: None,
        session: Some("ses_1".into()),
        exit_code: Some(0),
        exit_signal: None,
        summary: RoundSummary::default(),
        snapshot_after: Some("1".repeat(40)),
        changed: Vec::new(),
        worktree_changes: Vec::new(),
        checks: Vec::new(),
    };
    assert!(store.finish_round(round_id, &end).unwrap());
}

fn rewind_to(note: Option<&str>) -> Rewind {
    Rewind {
        session: None,
        resume_note: note.map(str::to_owned),
        fork_from: None,
        commander: "bob".into(),
        detail: serde_json::json!({ "session": "new" }),
    }
}

#[test]
fn later_rounds_are_marked_rewound_and_the_next_round_clears_the_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
    let (task, first) = store
        .create_task(&new_task(), &new_round(RoundKind::Start, "a"))
        .unwrap();
    done(first.id, &mut store, RoundStatus::Done);
    for token in ["b", "c"] {
        let round = store
            .begin_round(
                task.id,
                &new_round(RoundKind::Fix, token),
                &TaskUpdate::default(),
            )
            .unwrap();
        // A running round refuses a rewind and nothing is marked.
        let busy = store.rewind(task.id, 1, &rewind_to(None)).unwrap_err();
        assert!(matches!(busy, StoreError::Busy { .. }), "{busy:?}");
        done(round.id, &mut store, RoundStatus::Failed);
    }
    assert!(store.rounds(task.id).unwrap().iter().all(|r| !r.rewound));

    let marked = store
        .rewind(task.id, 1, &rewind_to(Some("kept: round 1")))
        .unwrap();
    assert_eq!(marked, [2, 3]);
    let rounds = store.rounds(task.id).unwrap();
    let flags: Vec<(u32, bool)> = rounds.iter().map(|r| (r.number, r.rewound)).collect();
    assert_eq!(flags, [(1, false), (2, true), (3, true)]);
    let task = store.task("t").unwrap().unwrap();
    assert_eq!(task.session, None);
    assert_eq!(task.resume_note.as_deref(), Some("kept: round 1"));
    // The table shows the status of the round the task went back to.
    assert_eq!(task.last_status, Some(RoundStatus::Done));
    let entry = store.journal(0, 100).unwrap().pop().unwrap();
    assert_eq!(entry.kind, "rewound");
    assert_eq!(entry.round, Some(1));
    assert_eq!(entry.detail["rewound"], serde_json::json!([2, 3]));
    assert_eq!(entry.detail["session"], "new");

    // A second rewind marks nothing twice.
    assert_eq!(
        store.rewind(task.id, 1, &rewind_to(None)).unwrap(),
        Vec::<u32>::new()
    );
    let point = ForkPoint {
        session: "ses_1".into(),
        at: "uuid-of-round-1".into(),
    };
    let mut forking = rewind_to(Some("again"));
    forking.fork_from = Some(point.clone());
    store.rewind(task.id, 1, &forking).unwrap();
    assert_eq!(
        store.task("t").unwrap().unwrap().fork_from.as_ref(),
        Some(&point)
    );
    // The next round takes the note and the fork point; the task keeps neither.
    let next = store
        .begin_round(
            task.id,
            &new_round(RoundKind::Fix, "d"),
            &TaskUpdate::default(),
        )
        .unwrap();
    assert_eq!(next.fork_from, Some(point));
    let task = store.task("t").unwrap().unwrap();
    assert_eq!((task.resume_note, task.fork_from), (None, None));
    assert_eq!(
        store.round(task.id, Some(1)).unwrap().unwrap().fork_from,
        None
    );
}
