//! What is SQLite's own beside the conformance suite: schema versions (a database from a
//! newer ganger is refused), and the files the backend keeps beside the database, where
//! earlier gangers, the docs and people look for them: claims as `run/NAME.lock`, recorded
//! under that path, and streams as `tasks/SLUG/round-N.jsonl` and `.err`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_store::{
    ClaimKey, Liveness, NewRound, NewTask, RoundKind, RoundStream, SqliteStore, StateDir, Store,
    StoreError, StreamKind, Streams,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

fn open(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(&dir.path().join("state.db")).unwrap()
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
fn a_damaged_database_is_told_apart_and_keeps_sqlites_cause() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("state.db"), vec![b'x'; 8192]).unwrap();
    let error = SqliteStore::open(&dir.path().join("state.db")).unwrap_err();
    assert!(matches!(error, StoreError::Damaged { .. }), "{error:?}");
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert_eq!(error.to_string(), format!("state database error: {cause}"));
}

#[test]
fn claims_are_lock_files_beside_the_database_recorded_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir);
    let state = StateDir::at(dir.path());
    let claim = store.claim("r1-token").unwrap();
    let lock = state.lock_file("r1-token");
    assert_eq!(claim.key(), &ClaimKey::new(lock.to_string_lossy()));
    assert!(lock.is_file());
    // A round records its claim as the path, as every ganger before the boundary did.
    let (task, _) = store
        .create_task(&task("t"), &round("r1-token", claim.key().clone()))
        .unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
    let recorded: String = conn
        .query_row(
            "SELECT lock_path FROM rounds WHERE task_id = ?1",
            [task.id],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(PathBuf::from(recorded), lock);
    // A dead claim leaves its file until the work is settled; a released one removes it.
    drop(claim);
    assert!(lock.is_file());
    store.forget_claim(&store.claim_key("r1-token"));
    assert!(!lock.exists());
    let held = store.claim("r2-token").unwrap();
    store.forget_claim(held.key());
    assert!(
        store.is_alive(held.key()).unwrap(),
        "a live claim's file is never removed"
    );
    held.release();
    assert!(!state.lock_file("r2-token").exists());
    assert!(matches!(
        store.claim("../escape"),
        Err(StoreError::Io { .. })
    ));
}

#[test]
fn streams_are_the_round_files_beside_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir);
    let (task, round) = store
        .create_task(&task("t"), &round("tok", ClaimKey::new("x")))
        .unwrap();
    let state = StateDir::at(dir.path());
    for (kind, ext) in [(StreamKind::Stdout, "jsonl"), (StreamKind::Stderr, "err")] {
        let mut writer = store
            .create_stream(&RoundStream::of(&task, &round, kind))
            .unwrap();
        writer.write_all(ext.as_bytes()).unwrap();
        assert_eq!(
            std::fs::read(state.round_file("t", 1, ext)).unwrap(),
            ext.as_bytes()
        );
    }
}

fn task(slug: &str) -> NewTask {
    NewTask {
        slug: slug.into(),
        agent: "opencode".into(),
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
        permission: ganger_events::Permission::Write,
        sandbox: ganger_events::SandboxKind::Local,
        network: ganger_events::Network::Shared,
        rw: Vec::new(),
        allow: Vec::new(),
        warm: None,
        labels: Vec::new(),
        budget: ganger_store::Budget::default(),
        fleet: None,
    }
}

fn round(token: &str, claim: ClaimKey) -> NewRound {
    NewRound {
        kind: RoundKind::Start,
        model: None,
        session_before: None,
        commander: "alice".into(),
        token: token.into(),
        claim,
        host: None,
        snapshot_before: None,
        checks: Vec::new(),
        generation: None,
    }
}
