//! The live events of `ganger serve --listen` over a real socket: a round's lines arrive as
//! the agent prints them, a stream dropped mid-round and resumed with `Last-Event-ID` gets the
//! rest from the store with no line twice (and follows the task into its next round), and
//! the board's stream resumed after missed rounds gets exactly the journal entries it missed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_test_support::World;
use serde_json::{Value, json};
use std::time::Duration;
use web_world::{Served, SseEvent};

const LONG: Duration = Duration::from_secs(60);

/// The agent prints `line 1` .. `line 12` a tenth of a second apart, then its DONE line.
fn slow_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; for i in $(seq 1 12); do echo \"line $i\"; sleep 0.1; done; echo 'DONE: counted'",
        "",
        "",
    );
    world
}

fn texts(events: &[SseEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.name == "line")
        .flat_map(|e| {
            e.data["line"]["events"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|e| e["text"].as_str().map(str::to_owned))
        .collect()
}

fn ended(event: &SseEvent) -> bool {
    event.name == "round" && event.data["status"] != "running"
}

#[test]
fn a_round_stream_resumed_with_last_event_id_loses_and_repeats_nothing() {
    let served = Served::start(slow_world());
    let started = served.post("/api/tasks", &json!({"slug": "count", "message": "count"}));
    assert_eq!(started.status, 200, "{}", started.body);

    let mut stream = served.events("/api/tasks/count/events", None);
    assert_eq!(stream.status, 200);
    let mut lines = 0;
    let first = stream.until(LONG, |e| {
        lines += usize::from(e.name == "line");
        lines == 4
    });
    assert_eq!(first[0].name, "round");
    assert_eq!(first[0].data["round"], 1);
    assert_eq!(texts(&first), ["line 1", "line 2", "line 3", "line 4"]);
    // Every event has an id: ROUND:OFFSET, growing.
    let ids: Vec<String> = first.iter().map(|e| e.id.clone().unwrap()).collect();
    assert!(ids.iter().all(|id| id.starts_with("1:")), "{ids:?}");
    let last = ids.last().unwrap().clone();
    drop(stream);
    // Missed while away: some lines at least.
    std::thread::sleep(Duration::from_millis(350));

    let mut resumed = served.events("/api/tasks/count/events", Some(&last));
    let rest = resumed.until(LONG, ended);
    let mut all = texts(&first);
    all.extend(texts(&rest));
    let mut wanted: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    wanted.push("DONE: counted".into());
    assert_eq!(all, wanted);
    assert_eq!(rest.last().unwrap().data["done"], "DONE: counted");

    // The same stream follows the task into its next round.
    let fixed = served.post("/api/tasks/count/fix", &json!({"message": "again"}));
    assert_eq!(fixed.status, 200, "{}", fixed.body);
    let next = resumed.until(LONG, |e| ended(e) && e.data["round"] == 2);
    assert_eq!(texts(&next), wanted);
    assert!(
        next.iter().filter(|e| e.name == "line").all(|e| e
            .id
            .as_deref()
            .unwrap()
            .starts_with("2:"))
    );

    // An id that is not one of this stream's is bad input; a round past the last is a 404.
    let bad = served.events("/api/tasks/count/events", Some("yesterday"));
    assert_eq!(bad.status, 400);
    let missing = served.events("/api/tasks/count/events?round=9", None);
    assert_eq!(missing.status, 404);
}

#[test]
fn the_board_stream_resumed_gets_exactly_the_journal_entries_it_missed() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: quick'", "", "");
    let served = Served::start(world);
    let mut stream = served.events("/api/events", None);
    let first = stream.next().unwrap();
    assert_eq!(
        (first.name.as_str(), first.id.as_deref()),
        ("tasks", Some("0"))
    );
    assert_eq!(first.data["tasks"], json!([]));

    // A task started elsewhere (the CLI) shows up as a row and as journal entries.
    served
        .world
        .ganger(&["start", "a", "--message", "go", "--detach"])
        .expect_code(0);
    let (mut finished, mut row) = (false, false);
    let seen = stream.until(LONG, |e| {
        finished |= e.name == "journal" && e.data["kind"] == "round-finished";
        row |= e.name == "task" && e.data["slug"] == "a" && e.data["status"] == "done";
        finished && row
    });
    let last = seen.last().unwrap().id.clone().unwrap();
    drop(stream);

    // Missed: task b's whole life.
    served
        .world
        .ganger(&["start", "b", "--message", "go"])
        .expect_code(0);
    let missed: Vec<i64> = served.get(&format!("/api/journal?after={last}")).json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert!(missed.len() >= 3, "{missed:?}");

    let mut resumed = served.events("/api/events", Some(&last));
    // The table as it is now (state: b is in it, or comes as a row at once), then the
    // entries missed, each once.
    let table = resumed.next().unwrap();
    assert_eq!(table.name, "tasks");
    let has_b = |tasks: &Value| {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["slug"] == "b" && t["status"] == "done")
    };
    let mut b_seen = has_b(&table.data["tasks"]);
    let wanted_last = *missed.last().unwrap();
    let mut last_seen = false;
    let again = resumed.until(LONG, |e| {
        b_seen |= e.name == "task" && e.data["slug"] == "b" && e.data["status"] == "done";
        last_seen |= e.name == "journal" && e.data["id"].as_i64() == Some(wanted_last);
        b_seen && last_seen
    });
    let got: Vec<i64> = again
        .iter()
        .filter(|e| e.name == "journal")
        .map(|e| e.id.as_deref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(got, missed);

    // A first connection gets the recent journal; a bad id is refused.
    let mut fresh = served.events("/api/events", None);
    let fresh_events = fresh.until(LONG, |e| e.data["id"].as_i64() == Some(wanted_last));
    assert_eq!(fresh_events[0].name, "tasks");
    assert_eq!(
        fresh_events.iter().filter(|e| e.name == "journal").count() as i64,
        wanted_last
    );
    assert_eq!(served.events("/api/events", Some("x")).status, 400);
}

#[test]
fn a_round_stream_resumes_across_a_restart_of_serve() {
    let mut served = Served::start(slow_world());
    let started = served.post("/api/tasks", &json!({"slug": "count", "message": "count"}));
    assert_eq!(started.status, 200, "{}", started.body);
    let mut stream = served.events("/api/tasks/count/events", None);
    let mut lines = 0;
    let first = stream.until(LONG, |e| {
        lines += usize::from(e.name == "line");
        lines == 3
    });
    let last = first.last().unwrap().id.clone().unwrap();
    drop(stream);

    // The daemon dies and comes back; the round went on in its own host meanwhile.
    served.restart();
    let token = std::fs::read_to_string(web_world::token_file(&served.world)).unwrap();
    assert_eq!(
        token.trim(),
        served.token,
        "the token is kept across restarts"
    );
    let mut resumed = served.events("/api/tasks/count/events", Some(&last));
    let rest = resumed.until(LONG, ended);
    let mut all = texts(&first);
    all.extend(texts(&rest));
    let mut wanted: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    wanted.push("DONE: counted".into());
    assert_eq!(all, wanted);
}

#[test]
fn idle_clients_of_a_finished_task_share_one_reader() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo hello; echo 'DONE: quick'", "", "");
    world
        .ganger(&["start", "done", "--message", "go"])
        .expect_code(0);
    let served = Served::start(world);
    let pid = served.pid();
    // The descriptors of the store serve holds, the least of twenty looks a second long (its
    // board's reader and its scheduler open it for a moment at a time).
    let store = std::fs::canonicalize(served.world.repo.join(".ganger/state.db")).unwrap();
    let store_held = || {
        (0..20)
            .map(|_| {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::read_dir(format!("/proc/{pid}/fd"))
                    .unwrap()
                    .flatten()
                    .filter(|fd| {
                        std::fs::read_link(fd.path()).is_ok_and(|target| {
                            target.starts_with(store.to_string_lossy().as_ref())
                        })
                    })
                    .count()
            })
            .min()
            .unwrap()
    };
    // Settled: the server's own threads and store, before any client.
    std::thread::sleep(Duration::from_millis(500));
    let threads_before = web_world::proc_status(pid, "Threads");
    let store_before = store_held();

    let mut streams = Vec::new();
    for _ in 0..60 {
        let mut stream = served.events("/api/tasks/done/events", None);
        assert_eq!(stream.status, 200);
        // The round's report as the feed reaches it, its lines, its report as it ends.
        let mut reports = 0;
        let seen = stream.until(LONG, |e| {
            reports += usize::from(e.name == "round");
            reports == 2
        });
        assert_eq!(texts(&seen), ["hello", "DONE: quick"]);
        streams.push(stream);
    }
    std::thread::sleep(Duration::from_millis(500));
    let threads = web_world::proc_status(pid, "Threads");
    assert!(
        threads <= threads_before + 8,
        "60 idle clients of a finished task took serve from {threads_before} to {threads} threads"
    );
    drop(streams);

    // The clients gone, the server keeps no store open for them (SQLite keeps the descriptor
    // of a connection closed while another holds a lock on the file, for the next to open
    // it: a few, not one per client).
    std::thread::sleep(Duration::from_secs(1));
    let store_after = store_held();
    assert!(
        store_after <= store_before + 4,
        "serve holds {store_after} descriptors of the store, {store_before} before the clients"
    );
}

#[test]
fn a_last_event_id_of_a_round_that_cannot_exist_is_a_404() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: quick'", "", "");
    world
        .ganger(&["start", "one", "--message", "go"])
        .expect_code(0);
    let served = Served::start(world);
    for id in ["0:0", "0:17"] {
        let stream = served.events("/api/tasks/one/events", Some(id));
        assert_eq!(stream.status, 404, "Last-Event-ID {id}");
    }
    let stream = served.events("/api/tasks/one/events?round=0", None);
    assert_eq!(stream.status, 404, "?round=0");
}
