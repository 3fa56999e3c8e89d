//! The store's conformance suite (`conformance/`) run against the PostgreSQL backend, on the
//! server named by `GANGER_TEST_POSTGRES` (`postgres://USER:PASSWORD@HOST:PORT/DB`, a role
//! that may create databases; `scripts/postgres-cluster` makes one). Each test gets a database
//! of its own, created for it and dropped after it, and every connection is a `PgStore`
//! opened on it, as each ganger process opens its own. Without the variable the tests say so
//! and pass, unless `CI=true`, where they fail: CI must not skip them silently.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "a test fails loudly on what it did not expect, and says why it skipped"
)]

mod conformance;

use ganger_store::{Backend, ClaimKey, HandedClaim, Liveness, PgStore, QueueStore, StoreError};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The variable naming the server.
const SERVER_ENV: &str = "GANGER_TEST_POSTGRES";

/// A database of its own on the test server, dropped with the site.
struct PgSite {
    admin: String,
    name: String,
    url: String,
}

impl PgSite {
    /// A new database, or `None` (with a note) when no server is named outside CI.
    fn new() -> Option<PgSite> {
        let Ok(admin) = std::env::var(SERVER_ENV) else {
            if std::env::var("CI").is_ok_and(|ci| ci == "true") {
                panic!(
                    "{SERVER_ENV} is not set: CI runs the PostgreSQL conformance tests against a \
                     server (scripts/postgres-cluster DIR PORT prints its URL)"
                );
            }
            eprintln!("note: {SERVER_ENV} is not set; skipping this PostgreSQL test");
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!(
            "ganger_test_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap_or_else(|e| {
            panic!(
                "cannot connect to {} ({SERVER_ENV}): {e}",
                ganger_store::redact_url(&admin)
            )
        });
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let url = with_database(&admin, &name);
        Some(PgSite { admin, name, url })
    }

    /// A statement run on the site's database directly.
    fn execute(&self, sql: &str) {
        postgres::Client::connect(&self.url, postgres::NoTls)
            .unwrap()
            .batch_execute(sql)
            .unwrap();
    }
}

/// `url` naming database `name` instead of its own.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.find('?') {
        Some(at) => url.split_at(at),
        None => (url, ""),
    };
    let authority_start = base.find("://").map_or(0, |at| at + 3);
    let host_end = base[authority_start..]
        .rfind('@')
        .map_or(authority_start, |at| authority_start + at);
    let path = base[host_end..].find('/').map(|at| host_end + at);
    let prefix = match path {
        Some(at) => &base[..at],
        None => base,
    };
    format!("{prefix}/{name}{query}")
}

impl Drop for PgSite {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

impl conformance::Site for PgSite {
    fn connect(&self) -> Box<dyn Backend> {
        Box::new(PgStore::open(&self.url).unwrap())
    }
}

conformance::suite!(match PgSite::new() {
    Some(site) => site,
    None => return,
});

#[test]
fn a_url_names_the_database_it_is_given() {
    assert_eq!(
        with_database("postgres://u:p@h:5/postgres?sslmode=disable", "x"),
        "postgres://u:p@h:5/x?sslmode=disable"
    );
    assert_eq!(
        with_database("postgres://u:p/w@h:5", "x"),
        "postgres://u:p/w@h:5/x"
    );
}

#[test]
fn openers_racing_on_a_new_database_all_find_its_schema() {
    let Some(site) = PgSite::new() else { return };
    std::thread::scope(|scope| {
        let openers: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| PgStore::open(&site.url).map(drop)))
            .collect();
        for opener in openers {
            opener.join().unwrap().unwrap();
        }
    });
}

#[test]
fn a_database_newer_than_this_build_is_refused() {
    let Some(site) = PgSite::new() else { return };
    drop(PgStore::open(&site.url).unwrap());
    let known = PgStore::schema_version();
    site.execute("UPDATE schema_version SET version = version + 1");
    match PgStore::open(&site.url) {
        Err(StoreError::TooNew { found, known: k }) => assert_eq!((found, k), (known + 1, known)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_claim_handed_to_another_process_outlives_its_lease_until_released() {
    let Some(site) = PgSite::new() else { return };
    let parent = PgStore::open(&site.url).unwrap();
    let child = PgStore::open(&site.url).unwrap();
    let claim = parent.claim("handed").unwrap();
    let key = claim.key().clone();
    let handover = claim.handover();
    assert!(handover.inherit.is_none());
    // What the child's command line gets, read back as the child reads it.
    let handed = HandedClaim::from_arg(&handover.claim.to_arg()).unwrap();
    // The parent lets go as a process that handed its claim over does: it drops it.
    drop(claim);
    // Taken once: `inherited_claim` takes the handed claim by value, and it is not `Clone`.
    let inherited = child.inherited_claim(handed).unwrap();
    assert_eq!(inherited.key(), &key);
    // Well past a lease: the child's heartbeat keeps it alive.
    std::thread::sleep(Duration::from_secs(12));
    assert!(parent.is_alive(&key).unwrap());
    assert!(matches!(
        parent.claim("handed"),
        Err(StoreError::ClaimHeld { .. })
    ));
    inherited.release();
    assert!(!parent.is_alive(&key).unwrap());
    // A fence that is not the lease's is refused, not taken.
    let again = parent.claim("handed").unwrap();
    let stale = HandedClaim::Lease {
        name: "handed".into(),
        fence: 1,
    };
    assert!(matches!(
        child.inherited_claim(stale),
        Err(StoreError::ClaimHeld { .. })
    ));
    again.release();
    assert!(!child.is_alive(&ClaimKey::new("handed")).unwrap());
}

#[test]
fn the_data_version_moves_when_another_connection_commits() {
    let Some(site) = PgSite::new() else { return };
    let reader = PgStore::open(&site.url).unwrap();
    let mut writer = PgStore::open(&site.url).unwrap();
    let before = reader.data_version().unwrap();
    writer.clear_pause("m/x").unwrap();
    writer
        .pause_model(&ganger_store::ModelPause {
            model: "m/x".into(),
            until: 1,
            strikes: 1,
            reason: None,
        })
        .unwrap();
    assert_ne!(reader.data_version().unwrap(), before);
}

#[test]
fn a_write_kept_waiting_past_its_limit_is_contended_and_changes_nothing() {
    let Some(site) = PgSite::new() else { return };
    let mut store = PgStore::open(&site.url).unwrap();
    // Another process holds the write lock (the store's key, 0x6761_6e67_6572_0002) for
    // longer than a write waits.
    let mut other = postgres::Client::connect(&site.url, postgres::NoTls).unwrap();
    let mut tx = other.transaction().unwrap();
    tx.batch_execute("SELECT pg_advisory_xact_lock(7449356649010167810)")
        .unwrap();
    let error = store
        .enqueue(&ganger_store::NewQueued {
            slug: "waited".into(),
            kind: ganger_store::QueueKind::Start,
            options: serde_json::json!({}),
            prompt_file: "/tmp/p.md".into(),
            prompt: None,
            commander: "alice".into(),
            generation: None,
            fleet: None,
            after: Vec::new(),
            not_before: 0,
        })
        .unwrap_err();
    assert!(error.is_busy(), "{error:?}");
    tx.rollback().unwrap();
    assert!(store.open_items().unwrap().is_empty());
}

/// Set for the child process of [`a_holder_killed_outright_is_dead_once_its_lease_runs_out`]:
/// the claim's name and the database's URL.
const HOLDER_ENV: &str = "GANGER_TEST_LEASE_HOLDER";

/// Not a test: the holder that [`a_holder_killed_outright_is_dead_once_its_lease_runs_out`]
/// runs as a process of its own (this binary, asked for this function alone) and kills. It
/// does nothing in an ordinary run.
#[test]
fn lease_holder_of_the_killed_holder_test() {
    let Ok(spec) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let (name, url) = spec.split_once(' ').unwrap();
    let store = PgStore::open(url).unwrap();
    let _claim = store.claim(name).unwrap();
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the holder is this test binary itself, not an agent: it must die by SIGKILL"
)]
fn a_holder_killed_outright_is_dead_once_its_lease_runs_out() {
    let Some(site) = PgSite::new() else { return };
    let observer = PgStore::open(&site.url).unwrap();
    let key = observer.claim_key("killed");
    let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "lease_holder_of_the_killed_holder_test",
            "--exact",
            "--nocapture",
        ])
        .env(HOLDER_ENV, format!("killed {}", site.url))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !observer.is_alive(&key).unwrap() {
        assert!(Instant::now() < deadline, "the holder never took its claim");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Held past a renewal or two.
    std::thread::sleep(Duration::from_secs(5));
    assert!(observer.is_alive(&key).unwrap());
    // SIGKILL: no drop, no release, no notification; only the lease running out tells.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let killed = Instant::now();
    assert!(
        observer.is_alive(&key).unwrap(),
        "a killed holder's lease runs on until it runs out"
    );
    assert!(
        observer
            .wait_for_end(&key, Some(conformance::DEATH_NOTICED_WITHIN))
            .unwrap()
    );
    let noticed = killed.elapsed();
    // The lease (10 s from the last renewal) and a look at most a poll (1 s) after it ran
    // out, with room for a loaded machine; far less than the suite's 30 s.
    assert!(
        noticed < Duration::from_secs(15),
        "noticed {noticed:?} after the kill"
    );
    let taken = observer.claim("killed").unwrap();
    taken.release();
}

#[test]
fn waiters_share_one_listening_connection() {
    let Some(site) = PgSite::new() else { return };
    let holder = PgStore::open(&site.url).unwrap();
    let observer = PgStore::open(&site.url).unwrap();
    let claim = holder.claim("watched").unwrap();
    let key = claim.key().clone();
    let waiters = 24;
    let connections = std::thread::scope(|scope| {
        let waiting: Vec<_> = (0..waiters)
            .map(|_| scope.spawn(|| observer.wait_for_end(&key, Some(Duration::from_secs(20)))))
            .collect();
        // Every waiter has looked and sleeps.
        std::thread::sleep(Duration::from_millis(1500));
        let mut admin = postgres::Client::connect(&site.admin, postgres::NoTls).unwrap();
        let count: i64 = admin
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1",
                &[&site.name],
            )
            .unwrap()
            .get(0);
        let released = Instant::now();
        claim.release();
        for waiter in waiting {
            assert!(waiter.join().unwrap().unwrap());
        }
        // All of them woke by the release's notification, not by a lease running out (10 s);
        // room for a loaded machine, where two dozen looks queue for the pool.
        assert!(released.elapsed() < Duration::from_secs(5));
        count
    });
    // Sleeping waiters hold no connection: the pools' idle ones and one listening connection.
    assert!(
        connections < 12 && connections > 0,
        "{connections} connections for {waiters} waiters"
    );
}

#[test]
fn a_host_whose_lease_was_taken_writes_nothing_more_of_its_round() {
    use conformance::fixtures::{done, end, new_task, round_claimed, summary};
    use ganger_events::RoundStatus;
    use ganger_store::{RoundKind, RoundStream, Store, StreamKind, Streams};
    use std::io::{Read, Write};
    let Some(site) = PgSite::new() else { return };
    let mut host = PgStore::open(&site.url).unwrap();
    let claim = host.claim("tok-fenced").unwrap();
    let (task, round) = host
        .create_task(
            &new_task("fenced", "alice"),
            &round_claimed(RoundKind::Start, "fenced", "alice", claim.key().clone()),
        )
        .unwrap();
    let stream = RoundStream::of(&task, &round, StreamKind::Stdout);
    let mut out = host.create_stream(&stream).unwrap();
    out.write_all(b"before\n").unwrap();
    host.record_progress(round.id, &summary(1, None, None), 1)
        .unwrap();
    assert!(!claim.lost());

    // The host is paused past its lease (no renewal reached the database), and another
    // process takes the claim over under a new fence.
    site.execute(
        "UPDATE leases SET expires_at = now() - interval '1 second' WHERE name = 'tok-fenced'",
    );
    let mut other = PgStore::open(&site.url).unwrap();
    let taken = other.claim("tok-fenced").unwrap();

    // The host's heartbeat finds the lease gone at its next renewal.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !claim.lost() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(claim.lost(), "the heartbeat did not see the lease taken");

    // Resumed, the host writes: nothing of it lands, neither its progress, nor its stream,
    // nor its end.
    host.record_progress(round.id, &summary(999, None, Some("stale")), 2)
        .unwrap();
    assert!(out.write_all(b"after\n").is_err());
    assert!(!host.finish_round(round.id, &done()).unwrap());
    let seen = other.round(task.id, Some(1)).unwrap().unwrap();
    assert_eq!(seen.status, RoundStatus::Running);
    assert_eq!(seen.summary.tokens.input, 1);
    let mut text = String::new();
    other
        .read_stream(&stream, 0)
        .unwrap()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "before\n");

    // The new holder's writes land.
    assert!(
        other
            .finish_round(
                round.id,
                &end(RoundStatus::Interrupted, "s", summary(1, None, None))
            )
            .unwrap()
    );
    assert_eq!(
        host.round(task.id, Some(1)).unwrap().unwrap().status,
        RoundStatus::Interrupted
    );
    taken.release();
    drop(claim);
}

#[test]
fn a_round_whose_lease_ran_out_before_it_was_recorded_is_not_recorded() {
    use conformance::fixtures::{done, new_task, round_claimed};
    use ganger_store::{RoundKind, Store, StoreError, TaskUpdate};
    let Some(site) = PgSite::new() else { return };
    // A worker cut off while it starts a task: its claim runs out before it records it
    // (another worker saw it dead and settled the start); back, it records nothing.
    let mut host = PgStore::open(&site.url).unwrap();
    let claim = host.claim("tok-late").unwrap();
    site.execute(
        "UPDATE leases SET expires_at = now() - interval '1 second' WHERE name = 'tok-late'",
    );
    let refused = host
        .create_task(
            &new_task("late", "alice"),
            &round_claimed(RoundKind::Start, "late", "alice", claim.key().clone()),
        )
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::ClaimLost { .. }),
        "{refused:?}"
    );
    assert!(host.task("late").unwrap().is_none());
    drop(claim);
    // The same for a next round of a task that exists.
    let first = host.claim("tok-first").unwrap();
    let (task, round) = host
        .create_task(
            &new_task("next", "alice"),
            &round_claimed(RoundKind::Start, "next", "alice", first.key().clone()),
        )
        .unwrap();
    assert!(host.finish_round(round.id, &done()).unwrap());
    first.release();
    let second = host.claim("tok-second").unwrap();
    site.execute(
        "UPDATE leases SET expires_at = now() - interval '1 second' WHERE name = 'tok-second'",
    );
    let refused = host
        .begin_round(
            task.id,
            &round_claimed(RoundKind::Fix, "next", "alice", second.key().clone()),
            &TaskUpdate::default(),
        )
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::ClaimLost { .. }),
        "{refused:?}"
    );
    assert_eq!(host.rounds(task.id).unwrap().len(), 1);
    drop(second);
}

#[test]
fn a_scheduler_whose_lease_ran_out_claims_and_takes_over_nothing() {
    use ganger_store::{NewQueued, QueueKind, QueueState, QueueStore};
    let Some(site) = PgSite::new() else { return };
    let mut store = PgStore::open(&site.url).unwrap();
    let queued = |slug: &str| NewQueued {
        slug: slug.into(),
        kind: QueueKind::Start,
        options: serde_json::json!({}),
        prompt_file: std::path::PathBuf::new(),
        prompt: Some("p".into()),
        commander: "alice".into(),
        generation: None,
        fleet: None,
        after: Vec::new(),
        not_before: 0,
    };
    let (a, b) = (
        store.enqueue(&queued("a")).unwrap(),
        store.enqueue(&queued("b")).unwrap(),
    );
    let dead = store.claim("worker-dead").unwrap();
    let cut = store.claim("worker-cut").unwrap();
    assert!(store.claim_item(a.id, dead.key()).unwrap());
    // The cut worker's lease runs out while it cannot renew it: back, it claims nothing,
    // and takes over nothing, though it does not know yet.
    site.execute(
        "UPDATE leases SET expires_at = now() - interval '1 second' WHERE name = 'worker-cut'",
    );
    assert!(!store.claim_item(b.id, cut.key()).unwrap());
    assert!(
        !store
            .take_over_item(a.id, Some("worker-dead"), cut.key())
            .unwrap()
    );
    let other = PgStore::open(&site.url).unwrap();
    let items = other.open_items().unwrap();
    assert_eq!(
        items
            .iter()
            .map(|i| (i.state, i.claimed_by.as_deref()))
            .collect::<Vec<_>>(),
        [
            (QueueState::Delivering, Some("worker-dead")),
            (QueueState::Queued, None)
        ]
    );
    drop((dead, cut));
}

#[test]
fn a_lease_that_ran_out_unseen_still_fences_its_host_and_an_observer_settles_the_round() {
    use conformance::fixtures::{done, end, new_task, round_claimed, summary};
    use ganger_events::RoundStatus;
    use ganger_store::{RoundKind, Store};
    let Some(site) = PgSite::new() else { return };
    let mut host = PgStore::open(&site.url).unwrap();
    let claim = host.claim("tok-unseen").unwrap();
    let (task, round) = host
        .create_task(
            &new_task("unseen", "alice"),
            &round_claimed(RoundKind::Start, "unseen", "alice", claim.key().clone()),
        )
        .unwrap();
    site.execute(
        "UPDATE leases SET expires_at = now() - interval '1 second' WHERE name = 'tok-unseen'",
    );
    // Nobody took the claim, but it ran out: the host may no longer end the round, which is
    // dead to everyone, and whoever looks settles it.
    assert!(!host.finish_round(round.id, &done()).unwrap());
    let mut observer = PgStore::open(&site.url).unwrap();
    let dead: Vec<i64> = observer
        .dead_rounds()
        .unwrap()
        .iter()
        .map(|(_, round)| round.id)
        .collect();
    assert_eq!(dead, [round.id]);
    assert!(
        observer
            .finish_round(
                round.id,
                &end(RoundStatus::Interrupted, "s", summary(1, None, None))
            )
            .unwrap()
    );
    assert_eq!(
        observer.round(task.id, Some(1)).unwrap().unwrap().status,
        RoundStatus::Interrupted
    );
    drop(claim);
}

#[test]
fn work_queued_by_another_process_wakes_a_scheduler_at_once() {
    use ganger_store::{ClaimKey, NewQueued, QueueKind};
    let Some(site) = PgSite::new() else { return };
    let watcher = PgStore::open(&site.url).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    assert!(
        watcher
            .when_queue_changes(Box::new(move || tx.send(()).is_ok()))
            .unwrap()
    );
    let mut other = PgStore::open(&site.url).unwrap();
    let item = other
        .enqueue(&NewQueued {
            slug: "woken".into(),
            kind: QueueKind::Start,
            options: serde_json::json!({}),
            prompt_file: "/tmp/woken.md".into(),
            prompt: None,
            commander: "alice".into(),
            generation: None,
            fleet: None,
            after: Vec::new(),
            not_before: 0,
        })
        .unwrap();
    rx.recv_timeout(Duration::from_millis(500))
        .expect("queuing did not wake the watcher");
    // A claim wakes nobody; putting the item back does.
    assert!(other.claim_item(item.id, &ClaimKey::new("w")).unwrap());
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    other.requeue(item.id, 0, Some("later")).unwrap();
    rx.recv_timeout(Duration::from_millis(500))
        .expect("putting back did not wake the watcher");
}

#[test]
fn a_host_whose_connections_were_cut_writes_on_at_once_even_under_a_statement() {
    use conformance::fixtures::{new_task, round_claimed, summary};
    use ganger_store::{ProcessRef, RoundKind, RoundStream, Store, StreamKind, Streams};
    use std::io::{Read, Write};
    let Some(site) = PgSite::new() else { return };
    let mut host = PgStore::open(&site.url).unwrap();
    let claim = host.claim("tok-cut").unwrap();
    let (task, round) = host
        .create_task(
            &new_task("cut", "alice"),
            &round_claimed(RoundKind::Start, "cut", "alice", claim.key().clone()),
        )
        .unwrap();
    let stream = RoundStream::of(&task, &round, StreamKind::Stdout);
    let mut out = host.create_stream(&stream).unwrap();
    out.write_all(b"before\n").unwrap();
    host.record_progress(round.id, &summary(1, None, None), 1)
        .unwrap();
    // The server ends every connection of the database, as a restart's fast shutdown does,
    // between two of the host's writes: the host's pool does not know.
    site.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    std::thread::sleep(Duration::from_millis(300));
    // Each write goes through at once, on a new connection.
    out.write_all(b"after\n").unwrap();
    host.record_progress(round.id, &summary(2, None, None), 2)
        .unwrap();
    host.record_agent(
        round.id,
        ProcessRef {
            pid: 4242,
            start_ticks: 7,
        },
        None,
        None,
    )
    .unwrap();
    // A write in flight when the server ends its connection (the row is held by another
    // transaction, so the update waits on the server): sent again, it lands.
    let mut blocker = postgres::Client::connect(&site.url, postgres::NoTls).unwrap();
    let mut held = blocker.transaction().unwrap();
    held.execute(
        "SELECT 1 FROM rounds WHERE id = $1 FOR UPDATE",
        &[&round.id],
    )
    .unwrap();
    let writing = std::thread::spawn(move || {
        let written = host.record_progress(round.id, &summary(3, None, None), 3);
        (host, written)
    });
    let mut admin = postgres::Client::connect(&site.url, postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut cut = false;
    while !cut && Instant::now() < deadline {
        cut = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .unwrap()
            .get::<_, i64>(0)
            > 0;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(cut, "the host's write never waited on the held row");
    held.commit().unwrap();
    let (host, written) = writing.join().unwrap();
    written.unwrap();
    drop(host);
    let observer = PgStore::open(&site.url).unwrap();
    let seen = observer.round(task.id, Some(1)).unwrap().unwrap();
    assert_eq!(seen.summary.tokens.input, 3);
    assert_eq!(seen.agent.map(|a| a.pid), Some(4242));
    let mut text = String::new();
    observer
        .read_stream(&stream, 0)
        .unwrap()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "before\nafter\n");
    claim.release();
}
