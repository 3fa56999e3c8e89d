//! Pipelines and rewinds in the store: a task with no round, role tasks under it with their
//! first round, the links `status --tree` reads, a pipeline's state saved and read back; and
//! a rewind that marks later rounds (only once), replaces the task's session and next-round
//! note, tells the journal, and is refused while a round runs.

use super::Site;
use super::fixtures::{end, new_round, new_task};
use ganger_events::{RoundStatus, RoundSummary};
use ganger_store::{
    Backend, ForkPoint, NewTask, PipelineRecord, ReviewerVerdict, Rewind, RoleLink, RoundKind,
    StoreError, TaskUpdate,
};

/// A task whose rounds have `permission`.
fn task_with(slug: &str, permission: &str) -> NewTask {
    NewTask {
        permission: permission.parse().unwrap(),
        ..new_task(slug, "alice")
    }
}

fn finish(store: &mut dyn Backend, round_id: i64, status: RoundStatus) {
    assert!(
        store
            .finish_round(round_id, &end(status, "ses_1", RoundSummary::default()))
            .unwrap()
    );
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

pub fn role_tasks_live_under_a_bare_task_and_a_pipeline_reads_back(site: &dyn Site) {
    let mut store = site.connect();
    let parent = store.create_bare_task(&task_with("pipe", "write")).unwrap();
    assert_eq!(parent.rounds, 0);
    assert_eq!((parent.parent, parent.role.as_deref()), (None, None));
    assert!(store.round(parent.id, None).unwrap().is_none());
    assert!(matches!(
        store.create_bare_task(&task_with("pipe", "write")),
        Err(StoreError::SlugTaken(_))
    ));

    let (planner, round) = store
        .create_role_task(
            parent.id,
            "planner",
            &task_with("pipe.planner", "read-only"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    assert_eq!(planner.parent, Some(parent.id));
    assert_eq!(planner.role.as_deref(), Some("planner"));
    assert_eq!(planner.permission.as_str(), "read-only");
    assert_eq!((round.number, planner.rounds), (1, 1));
    store
        .create_role_task(
            parent.id,
            "executor",
            &task_with("pipe.executor", "write"),
            &new_round(RoundKind::Start, "b", "alice"),
        )
        .unwrap();
    let roles: Vec<String> = store
        .role_tasks(parent.id)
        .unwrap()
        .into_iter()
        .map(|t| t.slug)
        .collect();
    assert_eq!(roles, ["pipe.planner", "pipe.executor"]);
    assert_eq!(
        store.role_links().unwrap()[0],
        RoleLink {
            slug: "pipe.planner".into(),
            parent: "pipe".into(),
            role: "planner".into()
        }
    );

    assert!(store.pipeline(parent.id).unwrap().is_none());
    let mut record = PipelineRecord {
        task_id: parent.id,
        stage: "awaiting-approval".into(),
        reason: None,
        brief: "Add one.txt.".into(),
        plan_version: 2,
        steps_total: 3,
        steps_done: 0,
        review_round: 0,
        verdicts: vec![ReviewerVerdict {
            reviewer: "code".into(),
            verdict: "pending".into(),
            round: 0,
            findings: Vec::new(),
        }],
        updated_at: 0,
    };
    store.save_pipeline(&record).unwrap();
    record.stage = "failed".into();
    record.reason = Some("code still fail".into());
    record.verdicts[0].verdict = "fail".into();
    record.verdicts[0].findings = vec!["a.rs:1: no".into()];
    store.save_pipeline(&record).unwrap();
    let read = store.pipeline(parent.id).unwrap().unwrap();
    assert!(read.updated_at > 0);
    record.updated_at = read.updated_at;
    assert_eq!(read, record);
}

pub fn a_rewind_marks_later_rounds_and_the_next_round_takes_its_note(site: &dyn Site) {
    let mut store = site.connect();
    let (task, first) = store
        .create_task(
            &new_task("t", "alice"),
            &new_round(RoundKind::Start, "a", "alice"),
        )
        .unwrap();
    finish(&mut *store, first.id, RoundStatus::Done);
    for token in ["b", "c"] {
        let round = store
            .begin_round(
                task.id,
                &new_round(RoundKind::Fix, token, "alice"),
                &TaskUpdate::default(),
            )
            .unwrap();
        // A running round refuses a rewind and nothing is marked.
        let busy = store.rewind(task.id, 1, &rewind_to(None)).unwrap_err();
        assert!(matches!(busy, StoreError::Busy { .. }), "{busy:?}");
        finish(&mut *store, round.id, RoundStatus::Failed);
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
            &new_round(RoundKind::Fix, "d", "alice"),
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
