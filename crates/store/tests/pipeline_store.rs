//! The SQLite store's pipeline side: a task with no round, role tasks under it with their
//! first round, the links `status --tree` reads, and a pipeline's state saved and read back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_store::{
    NewRound, NewTask, PipelineRecord, PipelineStore, ReviewerVerdict, RoleLink, RoundKind,
    SqliteStore, Store, StoreError,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn new_task(slug: &str, permission: &str) -> NewTask {
    NewTask {
        slug: slug.into(),
        agent: "opencode".into(),
        model: Some("mock/scripted".into()),
        base: "main".into(),
        base_commit: None,
        branch: "agent/pipe".into(),
        worktree: PathBuf::from("/tmp/repo-agent-pipe"),
        worktree_made: slug == "pipe",
        owner: "alice".into(),
        keys: BTreeMap::new(),
        timeout_ms: None,
        stall_ms: None,
        permission: permission.into(),
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

#[test]
fn role_tasks_live_under_a_bare_task_and_a_pipeline_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
    let parent = store.create_bare_task(&new_task("pipe", "write")).unwrap();
    assert_eq!(parent.rounds, 0);
    assert_eq!((parent.parent, parent.role.as_deref()), (None, None));
    assert!(store.round(parent.id, None).unwrap().is_none());
    assert!(matches!(
        store.create_bare_task(&new_task("pipe", "write")),
        Err(StoreError::SlugTaken(_))
    ));

    let (planner, round) = store
        .create_role_task(
            parent.id,
            "planner",
            &new_task("pipe.planner", "read-only"),
            &new_round("a"),
        )
        .unwrap();
    assert_eq!(planner.parent, Some(parent.id));
    assert_eq!(planner.role.as_deref(), Some("planner"));
    assert_eq!(planner.permission, "read-only");
    assert_eq!((round.number, planner.rounds), (1, 1));
    store
        .create_role_task(
            parent.id,
            "executor",
            &new_task("pipe.executor", "write"),
            &new_round("b"),
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
