//! A PostgreSQL server restarted under live stores (issue 19): a round host's claim and its
//! writes survive a fast shutdown and start of the server. The hosts' connections are cut by
//! the restart; their pools reconnect, the claim's heartbeat renews the lease once the server
//! is back, no other process sees the round as dead meanwhile, and the host's next writes
//! (a new task, the round's end, its stream) go through without an error.
//!
//! Restarting the shared test server would cut every other test's connections, so this test
//! makes a private cluster of its own (`scripts/postgres-cluster` in a temporary directory,
//! on a free port), which needs PostgreSQL's binaries and root or the `postgres` user, as
//! `.ci/run` has. Without `GANGER_TEST_POSTGRES` (the sign that the machine is set up for
//! PostgreSQL tests) it says so and passes, except under `CI=true`, where it fails.

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
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A private cluster, stopped and removed when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    url: String,
}

impl Cluster {
    fn start() -> Option<Cluster> {
        if std::env::var_os("GANGER_TEST_POSTGRES").is_none() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "GANGER_TEST_POSTGRES is not set: CI runs the PostgreSQL tests (.ci/run)"
            );
            eprintln!("note: GANGER_TEST_POSTGRES is not set; skipping this PostgreSQL test");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("ganger-pg-restart-")
            .tempdir()
            .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres-cluster");
        let made = Command::new("bash")
            .arg(&script)
            .arg(dir.path())
            .arg(port.to_string())
            .output()
            .unwrap();
        assert!(
            made.status.success(),
            "scripts/postgres-cluster failed: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let admin = String::from_utf8(made.stdout).unwrap().trim().to_owned();
        // A database of the test's role (the `postgres` database's schema is not its own).
        postgres::Client::connect(&admin, postgres::NoTls)
            .unwrap()
            .batch_execute("CREATE DATABASE restart")
            .unwrap();
        let (server, _) = admin.rsplit_once('/').unwrap();
        let url = format!("{server}/restart");
        Some(Cluster { dir, url })
    }

    /// `pg_ctl ACTION` on the cluster, as its OS user.
    fn pg_ctl(&self, args: &[&str]) {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .unwrap()
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .max()
            .unwrap();
        let data: PathBuf = self.dir.path().join("data");
        let status = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "pg_ctl {args:?} failed");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }
}

#[test]
fn a_restarted_server_loses_no_write_and_settles_no_live_round_as_dead() {
    let Some(cluster) = Cluster::start() else {
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
    cluster.pg_ctl(&["restart", "-m", "fast", "-w"]);
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
