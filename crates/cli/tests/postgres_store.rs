//! Commands against a PostgreSQL store (issue 19): chosen by `GANGER_STORE` or `--store`, a
//! task's rounds, its report, its log, a detached round seen running by another process and
//! cancelled by a third (the round's liveness is the database's lease, handed from the
//! starting command to its round host), with no `state.db` made beside the repository. And
//! the faults: a store that cannot be reached is an environment failure (70) that names the
//! URL without its password; a store that is no URL at all is bad input (2).
//!
//! The server is `GANGER_TEST_POSTGRES` (`scripts/postgres-cluster` makes one; `.ci/run`
//! starts it); each test gets a database of its own. Without the variable the tests say so
//! and pass, except under `CI=true`, where they fail.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "a test fails loudly on what it did not expect, and says why it skipped"
)]

use ganger_test_support::{
    PgDatabase as Database, World, living_pids_with_env, silent_server, wait_until,
};
use std::time::Duration;

/// A `ganger` command of `world` against the store at `url`, through `GANGER_STORE`.
fn ganger(world: &World, url: &str, args: &[&str]) -> ganger_test_support::Run {
    let mut command = world.command(args);
    command.env("GANGER_STORE", url);
    ganger_test_support::Run::from(command.output().unwrap())
}

#[test]
fn a_task_runs_its_rounds_against_postgres_and_nothing_is_stored_beside_the_repository() {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo work >> work.txt; echo 'DONE: wrote work.txt'",
        "",
        "",
    );
    let first = ganger(
        &world,
        &db.url,
        &["start", "pg1", "--message", "Write.", "--json"],
    );
    first.expect_code(0);
    assert_eq!(first.json()["status"], "done", "{}", first.stdout);
    let second = ganger(
        &world,
        &db.url,
        &["fix", "pg1", "--message", "Again.", "--json"],
    );
    second.expect_code(0);
    assert_eq!(second.json()["round"], 2, "{}", second.stdout);
    assert_eq!(
        std::fs::read_to_string(world.worktree("pg1").join("work.txt")).unwrap(),
        "work\nwork\n"
    );
    // The records are the server's: in its tables, and none in a state.db of the repository.
    assert!(!world.repo.join(".ganger/state.db").exists());
    assert_eq!(db.count("SELECT count(*) FROM tasks"), 1);
    assert_eq!(db.count("SELECT count(*) FROM rounds"), 2);
    // `--store` names the same store without the variable; the log is read from it.
    let url_flag = format!("--store={}", db.url);
    let listed = world.ganger(&[&url_flag, "status", "--json"]);
    listed.expect_code(0);
    assert!(listed.stdout.contains("pg1"), "{}", listed.stdout);
    let log = world.ganger(&[&url_flag, "log", "pg1"]);
    log.expect_code(0);
    assert!(log.stdout.contains("wrote work.txt"), "{}", log.stdout);
    // Without the store named, the local store does not start afresh beside the task's files
    // as if it had none: it refuses, and says where the records may be.
    let local = world.ganger(&["status"]);
    assert_eq!(local.code, 2, "{}{}", local.stdout, local.stderr);
    assert!(local.stderr.contains("(pg1)"), "{}", local.stderr);
    assert!(local.stderr.contains("GANGER_STORE"), "{}", local.stderr);
    assert!(!world.repo.join(".ganger/state.db").exists());
}

#[test]
fn a_detached_round_is_alive_to_other_processes_until_cancelled() {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo started; sleep 600", "", "");
    ganger(
        &world,
        &db.url,
        &["start", "long", "--message", "Wait.", "--detach"],
    )
    .expect_code(0);
    let running = ganger(&world, &db.url, &["status", "long", "--json"]);
    assert_eq!(running.json()["status"], "running", "{}", running.stdout);
    let token = running.json()["token"].as_str().unwrap().to_owned();
    // The host holds the round's lease: no other process settles it as dead meanwhile.
    std::thread::sleep(Duration::from_secs(3));
    let still = ganger(&world, &db.url, &["status", "long", "--json"]);
    assert_eq!(still.json()["status"], "running", "{}", still.stdout);
    assert_eq!(db.count("SELECT count(*) FROM leases"), 1);
    let cancelled = ganger(&world, &db.url, &["cancel", "long", "--json"]);
    cancelled.expect_code(0);
    let ended = ganger(&world, &db.url, &["wait", "long", "--json"]);
    assert_eq!(ended.json()["status"], "cancelled", "{}", ended.stdout);
    assert!(
        wait_until(Duration::from_secs(20), || living_pids_with_env(&format!(
            "GANGER_ROUND={token}"
        ))
        .is_empty()),
        "a process of the cancelled round is still running"
    );
    assert!(
        wait_until(Duration::from_secs(20), || db
            .count("SELECT count(*) FROM leases")
            == 0),
        "the round's lease outlived it"
    );
}

/// Issue 39.5: `--store` is no longer put into ganger's own environment; the detached host is
/// handed the store (in its environment) and its claim (on its command line), and its command
/// line names the claim but not the store's password.
#[test]
fn a_detached_round_of_a_store_named_by_flag_is_carried_by_a_host_whose_command_line_has_no_password()
 {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; sleep 3; echo 'DONE: ok'", "", "");
    let started = world.ganger(&[
        "--store",
        &db.url,
        "start",
        "flagged",
        "--message",
        "Hi.",
        "--detach",
        "--json",
    ]);
    started.expect_code(0);
    let pid = started.json()["host_pid"].as_u64().unwrap();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(cmdline.contains(" host flagged 1 "), "{cmdline}");
    assert!(cmdline.contains("--claim lease:"), "{cmdline}");
    assert!(!cmdline.contains(&password_of(&db.url)), "{cmdline}");
    let ended = world.ganger(&["--store", &db.url, "wait", "flagged", "--json"]);
    assert_eq!(ended.json()["status"], "done", "{}", ended.stdout);
    assert!(!world.repo.join(".ganger/state.db").exists());
    assert_eq!(
        db.count("SELECT count(*) FROM rounds WHERE status = 'done'"),
        1
    );
}

#[test]
fn a_store_that_cannot_be_reached_names_its_url_without_the_password() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("postgres://ganger:hunter2secret@127.0.0.1:{closed}/fleet");
    for run in [
        ganger(&world, &url, &["status"]),
        world.ganger(&["--store", &url, "start", "x", "--message", "Hi."]),
    ] {
        assert_eq!(run.code, 70, "{}{}", run.stdout, run.stderr);
        // GANGER_STORE's password leaves ganger's environment first thing (issue 44): that
        // URL is named without it; --store's with it hidden.
        assert!(
            run.stderr
                .contains(&format!("postgres://ganger:***@127.0.0.1:{closed}/fleet"))
                || run
                    .stderr
                    .contains(&format!("postgres://ganger@127.0.0.1:{closed}/fleet")),
            "{}",
            run.stderr
        );
        assert!(!format!("{}{}", run.stdout, run.stderr).contains("hunter2secret"));
    }
    // A password holding `?` (the client reads it whole) and libpq's key-value form: the
    // password is hidden in the error and in --json, and the key-value form is a store.
    for url in [
        format!("postgres://ganger:hunter?2secret@127.0.0.1:{closed}/fleet"),
        format!("host=127.0.0.1 port={closed} user=ganger password=hunter2secret dbname=fleet"),
    ] {
        for run in [
            ganger(&world, &url, &["status"]),
            world.ganger(&["--store", &url, "status", "--json"]),
        ] {
            assert_eq!(run.code, 70, "{url}: {}{}", run.stdout, run.stderr);
            let shown = format!("{}{}", run.stdout, run.stderr);
            assert!(
                shown.contains("***") || shown.contains(&format!("{closed}")),
                "{shown}"
            );
            assert!(
                !shown.contains("hunter") && !shown.contains("2secret"),
                "{shown}"
            );
        }
    }
    // Nothing was made for the task that could not be recorded.
    assert!(!world.worktree("x").exists());
    let branches = world.git(&["branch", "--list", "--format=%(refname:short)"]);
    assert_eq!(branches, "main", "a branch was made: {branches}");
    for run in [
        world.ganger(&["--store", "mysql://u:hunter2secret@h/db", "status"]),
        ganger(&world, "postgress://u:hunter2secret@h/db", &["status"]),
        ganger(&world, "host=h port=hunter2secret", &["status"]),
    ] {
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains("not a store"), "{}", run.stderr);
        assert!(!run.stderr.contains("hunter2secret"), "{}", run.stderr);
    }
}

#[test]
fn a_store_that_accepts_and_never_answers_ends_each_command_with_its_cause() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let port = silent_server(std::net::TcpListener::bind("127.0.0.1:0").unwrap());
    // The login's limit is the URL's connect_timeout (10 s when it names none).
    let url = format!("postgres://ganger:hunter2secret@127.0.0.1:{port}/fleet?connect_timeout=2");
    for args in [&["status"][..], &["worker", "--capacity", "1"][..]] {
        let mut command = world.command(args);
        command.env("GANGER_STORE", &url);
        let (run, took) = ganger_test_support::Run::within(command, Duration::from_secs(60));
        assert_eq!(
            run.code, 70,
            "{args:?} after {took:?}: {}{}",
            run.stdout, run.stderr
        );
        assert!(took < Duration::from_secs(30), "{args:?} took {took:?}");
        assert!(
            run.stderr.contains(&format!("127.0.0.1:{port}")) && run.stderr.contains("answer"),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("hunter2secret"), "{}", run.stderr);
        // A worker says it takes rounds only once it reached the store.
        assert!(
            !run.stdout.contains("taking queued rounds"),
            "{}",
            run.stdout
        );
    }
}

/// The password of the store at `url` (`postgres://USER:PASSWORD@...`).
fn password_of(url: &str) -> String {
    let (user_info, _) = url["postgres://".len()..].rsplit_once('@').unwrap();
    user_info.split_once(':').unwrap().1.to_owned()
}

#[test]
fn agents_and_checks_get_nothing_of_gangers_own_and_the_store_password_is_redacted() {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let password = password_of(&db.url);
    assert!(
        password.len() >= 8,
        "the test server's password is too short to find"
    );
    // Where the agent and the check leave their environments, and a file that holds the
    // store's URL (as a repository's ganger.toml may), which the agent prints.
    let seen = world.root().join("seen");
    std::fs::create_dir_all(&seen).unwrap();
    std::fs::write(seen.join("url.txt"), &db.url).unwrap();
    let seen_text = seen.to_string_lossy();
    world.use_command_agent(
        &format!(
            "cat >/dev/null; env > {seen_text}/agent.env; echo \"the url: $(cat {seen_text}/url.txt)\"; \
             echo 'DONE: looked'"
        ),
        "",
        "",
    );
    let check = format!("env > {seen_text}/check.env");
    let run = world.ganger(&[
        "--store",
        &db.url,
        "start",
        "env1",
        "--message",
        "Look around.",
        "--check",
        &check,
        "--json",
    ]);
    run.expect_code(0);
    for file in ["agent.env", "check.env"] {
        let env = std::fs::read_to_string(seen.join(file)).unwrap();
        let own: Vec<&str> = env
            .lines()
            .filter(|line| line.starts_with("GANGER_") && !line.starts_with("GANGER_ROUND="))
            .collect();
        assert!(
            own.is_empty(),
            "{file} holds ganger's own variables: {own:?}"
        );
        assert!(
            !env.contains(&password),
            "{file} holds the store's password"
        );
    }
    // What the agent printed of the store's password is redacted in the stream kept in the
    // store, and in everything shown of the round.
    let log = world.ganger(&["--store", &db.url, "log", "env1", "--raw"]);
    log.expect_code(0);
    assert!(
        log.stdout.contains("the url: postgres://"),
        "{}",
        log.stdout
    );
    assert!(log.stdout.contains("[redacted:store]"), "{}", log.stdout);
    let mut shown = format!("{}{}{}", run.stdout, log.stdout, log.stderr);
    for args in [&["status", "env1", "--json"][..], &["log", "env1"][..]] {
        let more = world.ganger(&[&["--store", db.url.as_str()][..], args].concat());
        shown.push_str(&more.stdout);
    }
    assert!(
        !shown.contains(&password),
        "the password was shown:\n{shown}"
    );
    let stored: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM stream_chunks WHERE position($1::bytea in bytes) > 0",
            &[&password.as_bytes()],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 0, "the store's password was stored in a stream");
}

#[test]
fn a_fleet_drains_on_postgres_each_task_once_in_its_order() {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo 'DONE: ok'", "", "");
    let mut text = String::new();
    for n in 0..6 {
        text.push_str(&format!(
            "[[task]]\nslug = \"t{n}\"\nmessage = \"task {n}\"\n"
        ));
        if n >= 3 {
            text.push_str(&format!("after = [\"t{}\"]\n", n - 3));
        }
    }
    let file = world.root().join("f.toml");
    std::fs::write(&file, text).unwrap();
    let run = ganger(&world, &db.url, &["fleet", "run", file.to_str().unwrap()]);
    run.expect_code(0);
    let status = ganger(&world, &db.url, &["fleet", "status", "f", "--json"]).json();
    let tasks = status["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 6, "{status:#}");
    for task in tasks {
        assert_eq!(
            (&task["queue"], &task["rounds"], &task["last_status"]),
            (
                &serde_json::json!("ended"),
                &serde_json::json!(1),
                &serde_json::json!("done")
            ),
            "{task:#}"
        );
    }
    assert_eq!(db.count("SELECT count(*) FROM rounds"), 6);
    // Each task after its predecessor: its round began once the other's had ended.
    assert_eq!(
        db.count(
            "SELECT count(*) FROM rounds later JOIN tasks lt ON lt.id = later.task_id, \
             rounds earlier JOIN tasks et ON et.id = earlier.task_id \
             WHERE et.slug = 't' || (substr(lt.slug, 2)::int - 3) AND later.started_at < earlier.ended_at"
        ),
        0
    );
}

/// Whether process `pid` lives (a zombie does not).
fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// Sends `signal` (`-STOP`, `-CONT`) to `pid`.
fn signal(pid: i64, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Starts a detached round of `slug` whose agent prints a line every 0.2 s for ten minutes;
/// returns its host's pid and its token once the agent has printed.
fn start_ticking(world: &World, db: &Database, slug: &str) -> (i64, String) {
    world.use_command_agent(
        "cat >/dev/null; while true; do echo tick; sleep 0.2; done",
        "",
        "",
    );
    ganger(
        world,
        &db.url,
        &["start", slug, "--message", "Tick.", "--detach"],
    )
    .expect_code(0);
    assert!(wait_until(Duration::from_secs(30), || db
        .count("SELECT count(*) FROM stream_chunks")
        > 0));
    let running = ganger(world, &db.url, &["status", slug, "--json"]).json();
    assert_eq!(running["status"], "running", "{running:#}");
    (
        running["host_pid"].as_i64().unwrap(),
        running["token"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_host_paused_past_its_lease_writes_nothing_of_its_round_when_it_resumes() {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let (host, token) = start_ticking(&world, &db, "paused");
    // The host stops (a paused VM, a long GC, a partition) while its agent goes on writing
    // into the pipe; its lease runs out by the database's clock.
    signal(host, "-STOP");
    assert!(
        wait_until(Duration::from_secs(30), || db
            .count("SELECT count(*) FROM leases WHERE expires_at > now()")
            == 0),
        "the paused host's lease did not run out"
    );
    // Another process finds the round dead and settles it.
    let settled = ganger(&world, &db.url, &["status", "paused", "--json"]).json();
    assert_eq!(settled["status"], "interrupted", "{settled:#}");
    let chunks = db.count("SELECT count(*) FROM stream_chunks");
    let reason = settled["reason"].clone();
    // Resumed, the host has lost the round: what it read meanwhile, and its own end, are
    // refused; it ends, and nothing of the round is left running.
    signal(host, "-CONT");
    assert!(
        wait_until(Duration::from_secs(30), || !alive(host)),
        "the resumed host did not end"
    );
    let after = ganger(&world, &db.url, &["status", "paused", "--json"]).json();
    assert_eq!(after["status"], "interrupted", "{after:#}");
    assert_eq!(after["reason"], reason, "{after:#}");
    assert_eq!(db.count("SELECT count(*) FROM stream_chunks"), chunks);
    assert_eq!(db.count("SELECT count(*) FROM leases"), 0);
    assert!(living_pids_with_env(&format!("GANGER_ROUND={token}")).is_empty());
}

#[test]
fn a_host_that_finds_its_lease_gone_stops_its_agent_and_leaves_the_round_to_others() {
    let Some(db) = Database::new() else { return };
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let (host, token) = start_ticking(&world, &db, "lost");
    // As if the host's renewals had not reached the database in time (a partition).
    let mut client = db.client();
    client
        .batch_execute("UPDATE leases SET expires_at = now() - interval '1 second'")
        .unwrap();
    // With nobody looking, the host sees at its next renewal that the round is no longer its
    // own, stops its agent and ends, without writing the round's end.
    assert!(
        wait_until(Duration::from_secs(30), || !alive(host)
            && living_pids_with_env(&format!("GANGER_ROUND={token}"))
                .is_empty()),
        "the host or its agent outlived the lease"
    );
    assert_eq!(
        db.count("SELECT count(*) FROM rounds WHERE status = 'running'"),
        1
    );
    // Whoever looks next settles it.
    let settled = ganger(&world, &db.url, &["status", "lost", "--json"]).json();
    assert_eq!(settled["status"], "interrupted", "{settled:#}");
}
