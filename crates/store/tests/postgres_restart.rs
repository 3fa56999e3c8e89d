//! A PostgreSQL server restarted under live stores (issue 19): a round host's claim and its
//! writes survive a fast shutdown and start of the server. The hosts' connections are cut by
//! the restart; their pools reconnect, the claim's heartbeat renews the lease once the server
//! is back, no other process sees the round as dead meanwhile, and the host's next writes
//! (a new task, the round's end, its stream) go through without an error.
//!
//! Restarting the shared test server would cut every other test's connections, so this test
//! makes a private cluster of its own (test-support's `pg_cluster.rs`, included by path).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "a test fails loudly on what it did not expect, and says why it skipped"
)]

#[path = "conformance/fixtures.rs"]
#[allow(dead_code, reason = "the suite's fixtures; this test uses a few")]
mod fixtures;

use fixtures::{done, new_task, round_claimed};
use ganger_store::{
    Backend, Liveness, PgStore, RoundKind, RoundStream, Store, StreamKind, Streams,
};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

#[path = "../../test-support/src/pg_cluster.rs"]
mod pg_cluster;

#[test]
fn a_restarted_server_loses_no_write_and_settles_no_live_round_as_dead() {
    let Some(cluster) = pg_cluster::PrivateCluster::start("restart") else {
        return;
    };
    let mut host = PgStore::open(&cluster.url).unwrap();
    let observer = PgStore::open(&cluster.url).unwrap();
    let claim = host.claim("tok-restart").unwrap();
    let (task, round) = host
        .create_task(
            &new_task("restart", "alice"),
            &round_claimed(
                RoundKind::Start,
                "tok-restart",
                "alice",
                claim.key().clone(),
            ),
        )
        .unwrap();
    let stream = RoundStream::of(&task, &round, StreamKind::Stdout);
    let mut out = host.create_stream(&stream).unwrap();
    out.write_all(b"before\n").unwrap();
    let mut writer = PgStore::open(&cluster.url).unwrap();
    // The stores' connections have just been used: the restart cuts them unseen.
    assert!(observer.dead_rounds().unwrap().is_empty());
    writer
        .create_task(
            &new_task("before", "bob"),
            &fixtures::new_round(RoundKind::Start, "tok-before", "bob"),
        )
        .unwrap();
    // What a round host reads and makes before it starts its agent.
    let reader = PgStore::open(&cluster.url).unwrap();
    assert!(reader.task("restart").unwrap().is_some());
    cluster.restart();
    // On connections the restart closed: no step before an agent runs fails for it.
    let found = reader.task("restart").unwrap().unwrap();
    assert_eq!(reader.round(found.id, None).unwrap().unwrap().id, round.id);
    let errors = RoundStream::of(&task, &round, StreamKind::Stderr);
    reader
        .create_stream(&errors)
        .unwrap()
        .write_all(b"err\n")
        .unwrap();
    // A write at once, on the connection the restart closed a moment after its last use.
    writer
        .create_task(
            &new_task("at-once", "bob"),
            &fixtures::new_round(RoundKind::Start, "tok-at-once", "bob"),
        )
        .unwrap();
    // Past a whole lease after the server is back, the round is never seen dead: the host's
    // heartbeat renewed it as soon as it could.
    // (A read on a connection the restart closed may fail once: the observer looks again.)
    let watch = Instant::now();
    let (mut looks, mut failed) = (0, 0);
    while watch.elapsed() < Duration::from_secs(13) {
        match (observer.dead_rounds(), observer.is_alive(claim.key())) {
            (Ok(dead), Ok(alive)) => {
                // (The writer's rounds have claims nobody holds: those are dead.)
                assert!(
                    alive && !dead.iter().any(|(_, dead)| dead.id == round.id),
                    "the live round was seen dead {:?} after the restart",
                    watch.elapsed()
                );
                looks += 1;
            }
            _ => failed += 1,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(looks >= 20 && failed <= 2, "{looks} looks, {failed} failed");
    // The host writes on as if nothing happened: its stream, another task, the round's end.
    out.write_all(b"after\n").unwrap();
    drop(out);
    host.create_task(
        &new_task("after", "alice"),
        &fixtures::new_round(RoundKind::Start, "tok-after", "alice"),
    )
    .unwrap();
    host.finish_round(round.id, &done()).unwrap();
    claim.release();
    let mut read = String::new();
    observer
        .read_stream(&stream, 0)
        .unwrap()
        .unwrap()
        .read_to_string(&mut read)
        .unwrap();
    assert_eq!(read, "before\nafter\n");
    assert!(observer.task("after").unwrap().is_some());
    assert!(observer.task("at-once").unwrap().is_some());
    assert!(!observer.is_alive(&round.claim).unwrap());
}
