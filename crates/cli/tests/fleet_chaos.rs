//! Chaos: while a 50-task fleet runs under `ganger serve`, the daemon is killed with SIGKILL
//! at random moments 10 times and started again. In the end every round asked for ran
//! exactly once (counted by the fake model server, outside ganger), none is left running, no
//! process of a round is left, and the store's invariants hold (every round has one end, no
//! task has two running rounds, every journal entry names a round that exists) besides
//! SQLite's own integrity check.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::fleet_world;

use fleet_world::FleetWorld;
use ganger_fake_llm::Script;
use ganger_test_support::{living_pids_with_env, wait_until};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const TASKS: usize = 50;
const KILLS: usize = 10;

/// A small generator, seeded from the clock and printed, so a failure can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next_in(&mut self, low: u64, high: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        low + (self.0 >> 33) % (high - low)
    }
}

fn serve(fw: &FleetWorld) -> Child {
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the daemon in the background to kill it"
    )]
    fw.world
        .command(&["serve", "--max", "6"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn sql_count(db: &rusqlite::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |row| row.get(0)).unwrap()
}

#[test]
fn killing_the_daemon_ten_times_loses_and_repeats_no_round() {
    let seed = std::env::var("CHAOS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("CHAOS_SEED={seed}");
    let mut random = Lcg(seed);
    let fw = FleetWorld::new(Script::new(), 300);
    let mut text = String::from("name = \"chaos\"\n");
    for n in 0..TASKS {
        let after = if n >= 10 && n % 3 == 0 {
            format!("after = [\"c{:02}\"]\n", n - 10)
        } else {
            String::new()
        };
        let agent = if n % 5 == 0 { "opencode" } else { "command" };
        text.push_str(&format!(
            "[[task]]\nslug = \"c{n:02}\"\nmessage = \"task c{n:02}\"\nagent = \"{agent}\"\n{after}\n"
        ));
    }
    let file = fw.fleet_file("chaos", &text);
    fw.world
        .ganger(&["fleet", "submit", file.to_str().unwrap()])
        .expect_code(0);

    let started = Instant::now();
    let mut daemon = serve(&fw);
    for kill in 0..KILLS {
        std::thread::sleep(Duration::from_millis(random.next_in(150, 900)));
        daemon.kill().unwrap(); // SIGKILL
        daemon.wait().unwrap();
        eprintln!(
            "kill {kill} at {:?}: {} requests so far",
            started.elapsed(),
            fw.llm.requests().len()
        );
        daemon = serve(&fw);
    }
    let drained = wait_until(Duration::from_secs(150), || {
        let status = fw
            .world
            .ganger(&["fleet", "status", "chaos", "--json"])
            .json();
        status["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["queue"] == "ended" && t["last_status"] == "done")
    });
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let status = fw
        .world
        .ganger(&["fleet", "status", "chaos", "--json"])
        .json();
    assert!(drained, "the fleet did not drain: {status:#}");
    eprintln!("drained after {:?}", started.elapsed());

    // Counted on the model server's side: one request per task, no more, no fewer.
    let per_task = fw.requests_per_task();
    assert_eq!(per_task.len(), TASKS, "{per_task:?}");
    let repeated: Vec<_> = per_task.iter().filter(|(_, n)| **n != 1).collect();
    assert!(
        repeated.is_empty(),
        "rounds ran more than once: {repeated:?}"
    );
    for n in 0..TASKS {
        assert_eq!(fw.runs(&format!("c{n:02}")).len(), 1, "c{n:02}");
    }

    // Nothing is left running: no round in the store, no process of a round.
    let list = fw.world.ganger(&["status", "--json"]).json();
    let text = list.to_string();
    assert!(!text.contains("\"running\""), "{list:#}");
    assert!(living_pids_with_env("GANGER_ROUND=").is_empty());

    // The store's invariants.
    let db = rusqlite::Connection::open(fw.world.repo.join(".ganger/state.db")).unwrap();
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM rounds WHERE status = 'running' OR ended_at IS NULL"
        ),
        0
    );
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM (SELECT task_id FROM rounds WHERE status = 'running' \
             GROUP BY task_id HAVING COUNT(*) > 1)"
        ),
        0
    );
    // Every round has exactly one end in the journal.
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM rounds r WHERE (SELECT COUNT(*) FROM journal j \
             WHERE j.task_id = r.task_id AND j.round = r.number AND j.kind = 'round-finished') != 1"
        ),
        0
    );
    // Every journal entry that names a round names one that exists.
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM journal j WHERE j.round IS NOT NULL AND NOT EXISTS \
             (SELECT 1 FROM rounds r WHERE r.task_id = j.task_id AND r.number = j.round)"
        ),
        0
    );
    eprintln!(
        "rounds interrupted before their agent started (and sent again): {}",
        sql_count(&db, "SELECT COUNT(*) FROM rounds WHERE status != 'done'")
    );
    // Every task has its rounds: one done, and any other one interrupted before its agent
    // started (the daemon died between recording it and starting its host).
    assert_eq!(sql_count(&db, "SELECT COUNT(*) FROM tasks"), TASKS as i64);
    assert_eq!(
        sql_count(&db, "SELECT COUNT(*) FROM rounds WHERE status = 'done'"),
        TASKS as i64
    );
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM rounds WHERE status != 'done' AND agent_pid IS NOT NULL"
        ),
        0
    );
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM queue WHERE state NOT IN ('ended')"
        ),
        0
    );
}
