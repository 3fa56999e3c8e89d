//! Streams packed (issue 44, PostgreSQL): a finished round's stream moves from rows to one
//! compressed object at its host's end, and `log` (raw and read) gives the same bytes before
//! and after, the rows gone.

use ganger_test_support::{PgDatabase, World, wait_until};
use std::time::Duration;

/// The rows of task `slug`'s streams still in `stream_chunks`.
fn chunk_rows(url: &str, slug: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query_one(
            "SELECT count(*) FROM stream_chunks c JOIN rounds r ON r.id = c.round_id \
             JOIN tasks t ON t.id = r.task_id WHERE t.slug = $1",
            &[&slug],
        )
        .unwrap()
        .get(0)
}

#[test]
fn a_finished_rounds_stream_is_packed_and_log_reads_the_same_bytes() {
    let Some(db) = PgDatabase::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; for i in $(seq 1 400); do echo \"line $i of the answer, \
         long enough to look like an agent's event stream\"; sleep 0.001; done; \
         echo 'DONE: ok'",
        "",
        "",
    );
    let ganger = |args: &[&str]| {
        let mut command = world.command(args);
        command.env("GANGER_STORE", &db.url);
        ganger_test_support::Run::from(command.output().unwrap())
    };
    // The host waits before it packs, so that `log` is read from the rows first.
    let mut start = world.command(&["start", "t", "--message", "do t", "--detach"]);
    start
        .env("GANGER_STORE", &db.url)
        .env("GANGER_FAULT_PAUSE", "host-before-packing:4000");
    ganger_test_support::Run::from(start.output().unwrap()).expect_code(0);
    // Its end is recorded before it packs (and lets go of its claim, which `wait` waits on).
    assert!(
        wait_until(Duration::from_secs(60), || {
            ganger(&["status", "t", "--json"]).json()["status"] == "done"
        }),
        "the round did not end"
    );
    let raw = ganger(&["log", "t", "--raw"]);
    raw.expect_code(0);
    let read = ganger(&["log", "t"]);
    read.expect_code(0);
    assert!(
        raw.stdout.contains("line 400 of the answer"),
        "{}",
        raw.stdout
    );
    assert!(chunk_rows(&db.url, "t") > 0, "read before it was packed");
    assert!(
        wait_until(Duration::from_secs(30), || chunk_rows(&db.url, "t") == 0),
        "the host packed the round's streams"
    );
    assert_eq!(ganger(&["log", "t", "--raw"]).stdout, raw.stdout);
    assert_eq!(ganger(&["log", "t"]).stdout, read.stdout);
}
