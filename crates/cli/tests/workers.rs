//! `ganger worker` and `ganger workers` (issue 19): workers sharing one store drain a fleet
//! between them, each task once; a worker killed outright leaves what it claimed to the
//! others (its rounds run on in their detached hosts, and another worker follows them to
//! their end); a round a worker cannot run (a sandbox it does not offer) waits for one that
//! can; a database restarted mid-fleet loses no round and settles none wrongly; bad input
//! is refused before anything is recorded. On SQLite (workers on one machine)
//! and on PostgreSQL (`GANGER_TEST_POSTGRES`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{PgDatabase, PrivateCluster, World, wait_until};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

/// A `ganger worker` running in the background, killed when dropped.
struct Worker {
    child: Child,
    log: PathBuf,
}

impl Worker {
    fn start(world: &World, store: Option<&str>, name: &str, args: &[&str]) -> Worker {
        Worker::start_with_env(world, store, name, args, &[])
    }

    /// The same, with `env` added to its environment.
    #[expect(
        clippy::disallowed_methods,
        reason = "the worker is ganger itself, run in the background as a user runs it"
    )]
    fn start_with_env(
        world: &World,
        store: Option<&str>,
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Worker {
        let log = world.root().join(format!("worker-{name}.log"));
        let mut all = vec!["worker", "--name", name];
        all.extend_from_slice(args);
        let mut command = world.command(&all);
        if let Some(url) = store {
            command.env("GANGER_STORE", url);
        }
        command.envs(env.iter().copied());
        let child = command
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Worker { child, log }
    }

    /// What it printed.
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The slugs whose round this worker started, from its event lines.
    fn started(&self) -> BTreeSet<String> {
        self.log_text()
            .lines()
            .filter_map(|line| line.strip_prefix("started ")?.split(' ').next())
            .map(str::to_owned)
            .collect()
    }

    /// Kills it outright, as a machine that dies.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A `ganger` command of `world` against `store` (the local one with `None`).
pub(crate) fn ganger(
    world: &World,
    store: Option<&str>,
    args: &[&str],
) -> ganger_test_support::Run {
    let mut command = world.command(args);
    if let Some(url) = store {
        command.env("GANGER_STORE", url);
    }
    ganger_test_support::Run::from(command.output().unwrap())
}

/// A world whose agent takes `seconds` and says it is done, with fleet `f` of `slugs`
/// submitted (`extra` added to a task's lines).
fn world_with_fleet(store: Option<&str>, seconds: u32, tasks: &[(&str, &str)]) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        &format!("cat >/dev/null; sleep {seconds}; echo 'DONE: ok'"),
        "",
        "",
    );
    let mut text = String::new();
    for (slug, extra) in tasks {
        text.push_str(&format!(
            "[[task]]\nslug = \"{slug}\"\nmessage = \"do {slug}\"\n{extra}\n"
        ));
    }
    let file = world.root().join("f.toml");
    std::fs::write(&file, text).unwrap();
    ganger(&world, store, &["fleet", "submit", file.to_str().unwrap()]).expect_code(0);
    world
}

/// `fleet status f --json`.
pub(crate) fn fleet(world: &World, store: Option<&str>) -> Value {
    ganger(world, store, &["fleet", "status", "f", "--json"]).json()
}

/// Whether every task of fleet `f` has ended.
fn drained(world: &World, store: Option<&str>) -> bool {
    fleet(world, store)["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|task| task["queue"] == "ended")
}

/// Each task of fleet `f` ran exactly one round, and it ended `done`.
fn each_task_done_once(world: &World, store: Option<&str>) {
    let status = fleet(world, store);
    for task in status["tasks"].as_array().unwrap() {
        assert_eq!(
            (&task["rounds"], &task["last_status"]),
            (&serde_json::json!(1), &serde_json::json!("done")),
            "{task:#}"
        );
    }
}

fn workers(world: &World, store: Option<&str>) -> Vec<Value> {
    ganger(world, store, &["workers", "--json"]).json()["workers"]
        .as_array()
        .unwrap()
        .clone()
}

fn slugs(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("t{i:02}")).collect()
}

fn two_workers_drain_a_fleet_each_task_once_between_them(store: Option<&str>) {
    let names = slugs(10);
    let tasks: Vec<(&str, &str)> = names.iter().map(|s| (s.as_str(), "")).collect();
    let world = world_with_fleet(store, 1, &tasks);
    let a = Worker::start(&world, store, "a", &["--capacity", "2"]);
    let b = Worker::start(&world, store, "b", &["--capacity", "2"]);
    assert!(
        wait_until(Duration::from_secs(60), || workers(&world, store)
            .iter()
            .filter(|w| w["alive"] == true)
            .count()
            == 2),
        "{:#?}",
        workers(&world, store)
    );
    let listed = workers(&world, store);
    for worker in &listed {
        assert_eq!(worker["capacity"], 2, "{worker:#}");
        assert!(worker["load"].as_u64().unwrap() <= 2, "{worker:#}");
        assert!(
            worker["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|agent| agent["name"] == "command"),
            "{worker:#}"
        );
        assert!(
            worker["sandboxes"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("local")),
            "{worker:#}"
        );
    }
    assert!(
        wait_until(Duration::from_secs(120), || drained(&world, store)),
        "{:#}",
        fleet(&world, store)
    );
    each_task_done_once(&world, store);
    // Between them, every task once: none twice, none lost, and both took a share.
    let (by_a, by_b) = (a.started(), b.started());
    assert!(by_a.is_disjoint(&by_b), "{by_a:?} {by_b:?}");
    let all: BTreeSet<String> = by_a.union(&by_b).cloned().collect();
    assert_eq!(all, names.iter().cloned().collect(), "{by_a:?} {by_b:?}");
    assert!(!by_a.is_empty() && !by_b.is_empty(), "{by_a:?} {by_b:?}");
}

#[test]
fn two_workers_drain_a_fleet_each_task_once_between_them_on_sqlite() {
    two_workers_drain_a_fleet_each_task_once_between_them(None);
}

#[test]
fn two_workers_drain_a_fleet_each_task_once_between_them_on_postgres() {
    let Some(db) = PgDatabase::new() else { return };
    two_workers_drain_a_fleet_each_task_once_between_them(Some(&db.url));
}

fn a_worker_killed_outright_leaves_what_it_claimed_to_another(store: Option<&str>) {
    let names = slugs(6);
    let tasks: Vec<(&str, &str)> = names.iter().map(|s| (s.as_str(), "")).collect();
    let world = world_with_fleet(store, 3, &tasks);
    let mut a = Worker::start(&world, store, "a", &["--capacity", "3"]);
    assert!(
        wait_until(Duration::from_secs(60), || a.started().len() >= 2),
        "worker a started nothing"
    );
    a.kill();
    let taken_by_a = a.started();
    let b = Worker::start(&world, store, "b", &["--capacity", "3"]);
    assert!(
        wait_until(Duration::from_secs(120), || drained(&world, store)),
        "{:#}",
        fleet(&world, store)
    );
    each_task_done_once(&world, store);
    // What a had started ran on in its detached hosts; b took the rest and followed a's
    // rounds to their end.
    let by_b = b.started();
    assert!(taken_by_a.is_disjoint(&by_b), "{taken_by_a:?} {by_b:?}");
    let log_b = b.log_text();
    for slug in &taken_by_a {
        assert!(
            log_b.contains(&format!("{slug} round 1: done")),
            "b did not follow {slug}:\n{log_b}"
        );
    }
    let listed = workers(&world, store);
    let alive: Vec<(&Value, &Value)> = listed.iter().map(|w| (&w["name"], &w["alive"])).collect();
    assert_eq!(
        alive,
        [
            (&serde_json::json!("a"), &serde_json::json!(false)),
            (&serde_json::json!("b"), &serde_json::json!(true))
        ]
    );
    // Issue 38.18: a dead worker runs nothing; its last load (the rounds b took over) is not
    // shown as its load.
    assert_eq!(listed[0]["load"], 0, "{:#}", listed[0]);
    let table = ganger(&world, store, &["workers"]);
    table.expect_code(0);
    let line = table
        .stdout
        .lines()
        .find(|line| line.starts_with("a "))
        .unwrap_or_else(|| panic!("no line of a:\n{}", table.stdout));
    assert!(
        line.contains(" dead ") && line.contains(" -/3 "),
        "{}",
        table.stdout
    );
}

#[test]
fn a_worker_killed_outright_leaves_what_it_claimed_to_another_on_sqlite() {
    a_worker_killed_outright_leaves_what_it_claimed_to_another(None);
}

#[test]
fn a_worker_killed_outright_leaves_what_it_claimed_to_another_on_postgres() {
    let Some(db) = PgDatabase::new() else { return };
    a_worker_killed_outright_leaves_what_it_claimed_to_another(Some(&db.url));
}

/// How many tasks of fleet `f` have ended; `None` while the store does not answer.
fn ended(world: &World, store: Option<&str>) -> Option<usize> {
    let run = ganger(world, store, &["fleet", "status", "f", "--json"]);
    if run.code != 0 {
        return None;
    }
    let status = run.json();
    Some(
        status["tasks"]
            .as_array()?
            .iter()
            .filter(|task| task["queue"] == "ended")
            .count(),
    )
}

#[test]
fn a_database_restarted_mid_fleet_loses_no_round_and_settles_none_wrongly() {
    let Some(cluster) = PrivateCluster::start("fleet") else {
        return;
    };
    let store = Some(cluster.url.as_str());
    let names = slugs(20);
    let tasks: Vec<(&str, &str)> = names.iter().map(|s| (s.as_str(), "")).collect();
    let world = world_with_fleet(store, 2, &tasks);
    let a = Worker::start(&world, store, "a", &["--capacity", "3"]);
    let b = Worker::start(&world, store, "b", &["--capacity", "3"]);
    assert!(
        wait_until(Duration::from_secs(120), || ended(&world, store)
            .is_some_and(|n| n >= 4)),
        "{:#}",
        fleet(&world, store)
    );
    // A fast shutdown and a start, with rounds running and more queued: every connection is
    // cut, the hosts' heartbeats and writes and the workers' passes meet a server that is
    // not there for a moment.
    cluster.restart();
    assert!(
        wait_until(Duration::from_secs(180), || ended(&world, store)
            .is_some_and(|n| n == names.len())),
        "{:#}\nworker a:\n{}\nworker b:\n{}",
        fleet(&world, store),
        a.log_text(),
        b.log_text()
    );
    // Each task ran one round, and it ended done: none settled as dead, none run twice.
    let (log_a, log_b) = (a.log_text(), b.log_text());
    let status = fleet(&world, store);
    for task in status["tasks"].as_array().unwrap() {
        assert_eq!(
            (&task["rounds"], &task["last_status"]),
            (&serde_json::json!(1), &serde_json::json!("done")),
            "{task:#}\nworker a:\n{log_a}\nworker b:\n{log_b}"
        );
    }
    let (by_a, by_b) = (a.started(), b.started());
    assert!(by_a.is_disjoint(&by_b), "{by_a:?} {by_b:?}");
    let all: BTreeSet<String> = by_a.union(&by_b).cloned().collect();
    assert_eq!(all, names.iter().cloned().collect(), "{by_a:?} {by_b:?}");
    // Both workers lived through it.
    let listed = workers(&world, store);
    assert!(
        listed.iter().all(|worker| worker["alive"] == true),
        "{listed:#?}"
    );
}

/// A detached round host that meets a database going down as it starts (taking over its
/// lease, recording itself) waits for the server instead of dying: the round ends done, its
/// only round, and nothing settles it as dead.
#[test]
fn a_host_started_as_the_database_goes_down_waits_for_it() {
    let Some(cluster) = PrivateCluster::start("hoststart") else {
        return;
    };
    let store = Some(cluster.url.as_str());
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; sleep 1; echo 'DONE: ok'", "", "");
    // The host pauses before it takes over its lease; meanwhile the server goes away, for
    // longer than a connection's first try and less than the lease it was handed.
    let mut start = world.command(&["start", "t", "--message", "do t", "--detach"]);
    start
        .env("GANGER_STORE", &cluster.url)
        .env("GANGER_FAULT_PAUSE", "host-before-takeover:400");
    ganger_test_support::Run::from(start.output().unwrap()).expect_code(0);
    cluster.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    std::thread::sleep(Duration::from_secs(3));
    cluster.pg_ctl(&["start", "-w"]);
    let waited = ganger(&world, store, &["wait", "t", "--timeout", "60", "--json"]);
    let status = ganger(&world, store, &["status", "t", "--json"]).json();
    assert_eq!(
        (&status["round"], &status["status"]),
        (&serde_json::json!(1), &serde_json::json!("done")),
        "{status:#}\nwait: {}{}",
        waited.stdout,
        waited.stderr
    );
}

/// A worker whose pass started a round and then failed as it recorded the delivery (the
/// store answering an error, injected in debug builds: a restart mid-fleet did it once)
/// settles its own item at the next pass: the round it started runs once and ends done, and
/// its log says it started it (the failed pass could not; three rounds went unsaid so).
#[test]
fn a_worker_whose_pass_failed_after_starting_a_round_says_it_started_it() {
    let world = world_with_fleet(None, 1, &[("t1", "")]);
    let worker = Worker::start_with_env(
        &world,
        None,
        "a",
        &[],
        &[("GANGER_FAULT_FAIL", "scheduler-recording-deliveries:1")],
    );
    assert!(
        wait_until(Duration::from_secs(120), || drained(&world, None)),
        "{:#}\n{}",
        fleet(&world, None),
        worker.log_text()
    );
    each_task_done_once(&world, None);
    let log = worker.log_text();
    assert!(log.contains("the store went away"), "{log}");
    assert_eq!(worker.started(), BTreeSet::from(["t1".to_owned()]), "{log}");
}

/// A worker whose temporary directory lies deep down (TMPDIR's path as long as a socket
/// address can hold) starts and drains its fleet: its warm keeper's socket, placed under
/// TMPDIR when the state directory's path is too long, goes under /tmp then. Before, the
/// worker ended at once: "path must be shorter than SUN_LEN".
#[test]
fn a_worker_with_a_long_temporary_directory_path_drains_its_fleet() {
    // The repository deep down too, so that its state directory's run directory is no place
    // for a socket either.
    let parent = tempfile::tempdir().unwrap();
    let deep = parent.path().join("d".repeat(90));
    std::fs::create_dir_all(&deep).unwrap();
    let world = World::new_in(env!("CARGO_BIN_EXE_ganger").as_ref(), &deep);
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let file = world.root().join("f.toml");
    std::fs::write(&file, "[[task]]\nslug = \"t1\"\nmessage = \"do t1\"\n").unwrap();
    ganger(&world, None, &["fleet", "submit", file.to_str().unwrap()]).expect_code(0);
    let mut worker = Worker::start_with_env(
        &world,
        None,
        "a",
        &[],
        &[("TMPDIR", deep.to_str().unwrap())],
    );
    // Not waited for past its end: a worker that ended early fails the test at once.
    let ended = |worker: &mut Worker| worker.child.try_wait().unwrap().is_some();
    wait_until(Duration::from_secs(60), || {
        drained(&world, None) || ended(&mut worker)
    });
    assert!(
        drained(&world, None),
        "{:#}\n{}",
        fleet(&world, None),
        worker.log_text()
    );
    each_task_done_once(&world, None);
}

#[test]
fn a_round_in_a_sandbox_a_worker_lacks_waits_for_one_that_offers_it() {
    let world = world_with_fleet(
        None,
        0,
        &[("t1", ""), ("t2", ""), ("boxed", "sandbox = \"bwrap\"")],
    );
    let local = Worker::start(&world, None, "local", &["--sandbox", "local"]);
    assert!(wait_until(Duration::from_secs(60), || local
        .started()
        .len()
        == 2));
    std::thread::sleep(Duration::from_secs(2));
    let status = fleet(&world, None);
    let boxed = status["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|task| task["slug"] == "boxed")
        .unwrap()
        .clone();
    assert_eq!(boxed["queue"], "queued", "{status:#}");
    let bwrap = Worker::start(&world, None, "boxes", &["--sandbox", "bwrap"]);
    assert!(
        wait_until(Duration::from_secs(60), || drained(&world, None)),
        "{:#}",
        fleet(&world, None)
    );
    each_task_done_once(&world, None);
    assert_eq!(bwrap.started(), BTreeSet::from(["boxed".to_owned()]));
}

#[test]
fn a_worker_refuses_bad_input_and_records_nothing() {
    let world = world_with_fleet(None, 0, &[("t1", "")]);
    for (args, says) in [
        (vec!["--name", "w", "--capacity", "0"], "--capacity"),
        (
            vec!["--name", "w", "--sandbox", "moon"],
            "unknown sandbox moon",
        ),
        (vec!["--name", "a b"], "worker name"),
    ] {
        let mut all = vec!["worker"];
        all.extend(args);
        let run = world.ganger(&all);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
    assert!(workers(&world, None).is_empty());
    let first = Worker::start(&world, None, "one", &[]);
    assert!(wait_until(Duration::from_secs(60), || workers(
        &world, None
    )
    .len()
        == 1));
    let second = world.ganger(&["worker", "--name", "one"]);
    assert_eq!(second.code, 2, "{}{}", second.stdout, second.stderr);
    assert!(
        second
            .stderr
            .contains("a worker named one is running already"),
        "{}",
        second.stderr
    );
    let listed = workers(&world, None);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["pid"].as_u64(), Some(u64::from(first.child.id())));
}
