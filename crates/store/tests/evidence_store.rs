//! The SQLite store's evidence side: budgets and what was spent (a task's, a fleet's, with a
//! running round's stored figures and one round left out), labels, `DONE:` lines, and the
//! commanders' journals with their cursors.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_events::{RoundStatus, RoundSummary, Tokens};
use ganger_store::{
    Budget, EvidenceStore, NewRound, NewTask, RoundEnd, RoundKind, Spent, SqliteStore, Store,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn new_task(slug: &str, owner: &str) -> NewTask {
    NewTask {
        slug: slug.into(),
        agent: "opencode".into(),
        model: Some("mock/scripted".into()),
        base: "main".into(),
        base_commit: None,
        branch: format!("agent/{slug}"),
        worktree: PathBuf::from(format!("/tmp/repo-agent-{slug}")),
        worktree_made: true,
        owner: owner.into(),
        keys: BTreeMap::new(),
        timeout_ms: None,
        stall_ms: None,
        permission: "write".into(),
        sandbox: "local".into(),
        network: "shared".into(),
        rw: Vec::new(),
    }
}

fn new_round(kind: RoundKind, token: &str, commander: &str) -> NewRound {
    NewRound {
        kind,
        model: None,
        session_before: None,
        commander: commander.into(),
        token: token.into(),
        lock_path: PathBuf::from(format!("/tmp/{token}.lock")),
        host: None,
        snapshot_before: None,
        checks: Vec::new(),
        generation: None,
    }
}

fn summary(input: u64, cost: Option<f64>, done: Option<&str>) -> RoundSummary {
    RoundSummary {
        tokens: Tokens {
            input,
            output: 10,
            reasoning: 5,
            cache_read: 1000,
            ..Tokens::default()
        },
        cost_usd: cost,
        done: done.map(Into::into),
        ..RoundSummary::default()
    }
}

fn end(summary: RoundSummary) -> RoundEnd {
    RoundEnd {
        status: RoundStatus::Done,
        snapshot_before: None,
        reason: None,
        session: Some("ses".into()),
        exit_code: Some(0),
        exit_signal: None,
        summary,
        snapshot_after: None,
        changed: Vec::new(),
        worktree_changes: Vec::new(),
        checks: Vec::new(),
    }
}

#[test]
fn spending_is_summed_per_task_and_per_fleet_with_running_rounds_and_one_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
    let (a, a1) = store
        .create_task(
            &new_task("a", "boss"),
            &new_round(RoundKind::Start, "a1", "boss"),
        )
        .unwrap();
    store
        .finish_round(a1.id, &end(summary(100, Some(0.25), None)))
        .unwrap();
    let a2 = store
        .begin_round(
            a.id,
            &new_round(RoundKind::Fix, "a2", "boss"),
            &Default::default(),
        )
        .unwrap();
    // A running round counts as far as its stored summary goes.
    store
        .record_progress(a2.id, &summary(50, None, None), 0)
        .unwrap();
    let (b, b1) = store
        .create_task(
            &new_task("b", "boss"),
            &new_round(RoundKind::Start, "b1", "boss"),
        )
        .unwrap();
    store
        .finish_round(b1.id, &end(summary(1000, Some(1.0), None)))
        .unwrap();
    let (c, _) = store
        .create_task(
            &new_task("c", "boss"),
            &new_round(RoundKind::Start, "c1", "boss"),
        )
        .unwrap();

    // Tokens are input + output + reasoning; cached reads are not counted.
    assert_eq!(
        store.task_spent(a.id, None).unwrap(),
        Spent {
            usd: 0.25,
            tokens: 115 + 65
        }
    );
    assert_eq!(
        store.task_spent(a.id, Some(a2.id)).unwrap(),
        Spent {
            usd: 0.25,
            tokens: 115
        }
    );

    assert_eq!(store.task_budget(a.id).unwrap(), Budget::default());
    let budget = Budget {
        usd: Some(2.0),
        tokens: None,
    };
    store.set_task_budget(a.id, &budget).unwrap();
    assert_eq!(store.task_budget(a.id).unwrap(), budget);

    store.set_fleet_budget("nightly", None, Some(5000)).unwrap();
    store
        .set_fleet_budget("nightly", Some(1.5), Some(4000))
        .unwrap();
    assert_eq!(
        store.fleet_budget("nightly").unwrap(),
        Budget {
            usd: Some(1.5),
            tokens: Some(4000)
        }
    );
    assert_eq!(store.fleet_budget("other").unwrap(), Budget::default());
    store.set_task_fleet(a.id, Some("nightly")).unwrap();
    store.set_task_fleet(b.id, Some("nightly")).unwrap();
    store.set_task_fleet(c.id, Some("nightly")).unwrap();
    store.set_task_fleet(c.id, None).unwrap();
    assert_eq!(store.task_fleet(a.id).unwrap().as_deref(), Some("nightly"));
    assert_eq!(store.task_fleet(c.id).unwrap(), None);
    assert_eq!(
        store.fleet_spent("nightly", None).unwrap(),
        Spent {
            usd: 1.25,
            tokens: 115 + 65 + 1015
        }
    );
    assert_eq!(
        store.fleet_spent("nightly", Some(a2.id)).unwrap(),
        Spent {
            usd: 1.25,
            tokens: 115 + 1015
        }
    );
    assert_eq!(store.fleet_spent("empty", None).unwrap(), Spent::default());
}

#[test]
fn labels_done_lines_and_groups_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
    let (a, a1) = store
        .create_task(
            &new_task("a", "boss"),
            &new_round(RoundKind::Start, "a1", "boss"),
        )
        .unwrap();
    let (b, _) = store
        .create_task(
            &new_task("b", "boss"),
            &new_round(RoundKind::Start, "b1", "boss"),
        )
        .unwrap();
    store
        .set_labels(
            a.id,
            &[("team".into(), "red".into()), ("size".into(), "s".into())],
        )
        .unwrap();
    store
        .set_labels(a.id, &[("team".into(), "blue".into())])
        .unwrap();
    assert_eq!(
        store.labels(a.id).unwrap(),
        BTreeMap::from([("size".into(), "s".into()), ("team".into(), "blue".into())])
    );
    store
        .finish_round(a1.id, &end(summary(1, None, Some("DONE: a"))))
        .unwrap();
    store.record_done(a.id, 1, "DONE: a").unwrap();
    assert_eq!(
        store.done_lines().unwrap(),
        BTreeMap::from([("a".into(), "DONE: a".into())])
    );
    let grouped = store.labelled_tasks("team").unwrap();
    assert_eq!(grouped.len(), 2);
    assert_eq!(
        (
            grouped[0].slug.as_str(),
            grouped[0].value.as_deref(),
            grouped[0].done.as_deref()
        ),
        ("a", Some("blue"), Some("DONE: a"))
    );
    assert_eq!(grouped[0].last_status.as_deref(), Some("done"));
    assert_eq!(
        (
            grouped[1].slug.as_str(),
            grouped[1].value.as_deref(),
            grouped[1].last_status.as_deref()
        ),
        ("b", None, Some("running"))
    );
    let _ = b;
}

#[test]
fn a_commanders_journal_holds_its_tasks_and_transfers_and_its_cursor_only_moves_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(&dir.path().join("state.db")).unwrap();
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
        .finish_round(m1.id, &end(summary(1, None, Some("DONE: ok"))))
        .unwrap();
    store
        .add_journal(
            theirs.id,
            None,
            "transferred",
            Some("other"),
            serde_json::json!({ "from": "other", "to": "boss" }),
        )
        .unwrap();
    let id = store
        .add_journal(
            mine.id,
            Some(1),
            "overlap",
            Some("boss"),
            serde_json::json!({}),
        )
        .unwrap();
    let kinds = |store: &SqliteStore, who: &str, after: i64| -> Vec<(String, String)> {
        store
            .commander_journal(who, after, 100)
            .unwrap()
            .into_iter()
            .map(|e| (e.slug.unwrap(), e.kind))
            .collect()
    };
    let pair = |slug: &str, kind: &str| (slug.to_owned(), kind.to_owned());
    assert_eq!(
        kinds(&store, "boss", 0),
        [
            pair("mine", "task-created"),
            pair("mine", "round-finished"),
            pair("theirs", "transferred"),
            pair("mine", "overlap"),
        ]
    );
    assert_eq!(
        kinds(&store, "other", 0),
        [
            pair("theirs", "task-created"),
            pair("theirs", "transferred")
        ]
    );
    let finished = store
        .commander_journal("boss", 0, 100)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == "round-finished")
        .unwrap();
    assert_eq!(finished.detail["done"], "DONE: ok");

    assert_eq!(store.journal_cursor("boss").unwrap(), 0);
    assert_eq!(store.ack_journal("boss", id - 1).unwrap(), id - 1);
    assert_eq!(store.ack_journal("boss", 1).unwrap(), id - 1);
    assert_eq!(store.journal_cursor("boss").unwrap(), id - 1);
    assert_eq!(store.journal_cursor("other").unwrap(), 0);
    assert_eq!(kinds(&store, "boss", id - 1), [pair("mine", "overlap")]);
    assert_eq!(store.last_journal_id().unwrap(), id);
}
