//! Failures of the environment, not of the input (issue 15, item 4): a read-only or corrupted
//! `state.db`, a full disk, `git` missing from `PATH`. None of them is "bad input" (exit 2,
//! which says nothing was made or changed): each exits 70, names its cause, never panics, and
//! loses nothing the store had committed. The read-only and full-disk cases run in a private
//! mount namespace of their own (`unshare -m`, as root, which CI is), so the rest of the
//! machine never sees the mounts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{Run, World};
use std::path::Path;
use std::process::Command;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo work >> work.txt; echo 'DONE: ok'",
        "",
        "",
    );
    world
}

/// Exit 70, the cause named, no panic.
#[track_caller]
fn environment_failure(run: &Run, cause: &str) {
    assert_eq!(
        run.code, 70,
        "exit {} instead of 70\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    );
    assert!(
        run.stderr.to_lowercase().contains(&cause.to_lowercase()),
        "the cause {cause:?} is not named:\n{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
}

/// Runs `script` with `sh` in a private mount namespace, in the world's environment, with
/// `$G` the ganger binary; returns what the script printed.
fn in_namespace(world: &World, script: &str) -> Run {
    let mut command = Command::new("unshare");
    command
        .args(["-m", "sh", "-c", script])
        .current_dir(&world.repo)
        .env("G", world.ganger_path());
    world.env(&mut command);
    Run::from(command.output().unwrap())
}

fn as_json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

#[test]
fn a_corrupted_store_is_an_environment_failure_that_names_its_cause() {
    let world = world();
    world
        .ganger(&["start", "a", "--message", "hi"])
        .expect_code(0);
    let db = world.repo.join(".ganger/state.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[..16].copy_from_slice(b"not a database!!");
    std::fs::write(&db, &bytes).unwrap();
    for args in [
        vec!["status"],
        vec!["fix", "a", "--message", "again"],
        vec!["clean", "--force"],
    ] {
        let run = world.ganger(&args);
        environment_failure(&run, "not a database");
    }
    // --json carries the kind and the causes.
    let run = world.ganger(&["status", "--json"]);
    let error = as_json(&run);
    assert_eq!(error["kind"], "environment", "{error:#}");
    assert_eq!(error["exit_code"], 70);
    assert!(
        error["causes"].as_array().is_some_and(|c| !c.is_empty()),
        "{error:#}"
    );
    assert!(world.worktree("a").is_dir(), "the task's worktree went");
}

#[test]
fn a_read_only_store_is_an_environment_failure_and_changes_nothing() {
    let world = world();
    world
        .ganger(&["start", "a", "--message", "hi"])
        .expect_code(0);
    let run = in_namespace(
        &world,
        "mount --bind -o ro .ganger .ganger && \"$G\" fix a --message again; echo \"exit $?\"",
    );
    assert!(
        run.stdout.trim_end().ends_with("exit 70"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.to_lowercase().contains("read-only") || run.stderr.contains("readonly"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    // Outside the namespace the store is as it was: one round, done.
    let report = world.ganger(&["status", "a", "--json"]).json();
    assert_eq!(
        (report["round"].as_u64(), report["status"].as_str()),
        (Some(1), Some("done"))
    );
}

#[test]
fn a_full_disk_is_an_environment_failure_and_loses_nothing_committed() {
    let world = world();
    // The repository and its state live on a small tmpfs that the script fills; the first
    // round is committed before the disk fills, and must be there, done, after.
    let script = r#"
set -u
mount -t tmpfs -o size=24m tmpfs "$HOME" || exit 90
disk="$HOME"
mkdir -p "$disk/r" && cd "$disk/r" && git init -q -b main . && echo x > f && git add f \
  && git commit -q -m init || exit 91
printf '[defaults]\nagent = "command"\n[agents.command]\nargv = ["sh", "-c", "cat >/dev/null; echo work >> work.txt; echo DONE: ok"]\n' > ganger.toml
"$G" start a --message hi >/dev/null || exit 92
head -c 64m /dev/zero > "$disk/filler" 2>/dev/null
"$G" fix a --message again > "$disk/../fix.out" 2>&1; echo "fix-exit $?"
cat "$disk/../fix.out" 1>&2
"$G" start b --message hi >/dev/null 2>"$disk/../start.err"; echo "start-exit $?"
cat "$disk/../start.err" 1>&2
rm "$disk/filler"
"$G" status a --json
"#;
    let run = in_namespace(&world, script);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let fix_exit = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("fix-exit "))
        .unwrap_or_else(|| panic!("{}\n{}", run.stdout, run.stderr));
    let start_exit = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("start-exit "))
        .unwrap_or_else(|| panic!("{}\n{}", run.stdout, run.stderr));
    // A fix on a full disk either could not begin (70) or its round failed to write (1);
    // never "bad input".
    assert!(
        fix_exit == "70" || fix_exit == "1",
        "fix exited {fix_exit}:\n{}",
        run.stderr
    );
    assert_eq!(start_exit, "70", "{}", run.stderr);
    assert!(
        run.stderr.contains("No space left on device")
            || run.stderr.contains("disk is full")
            || run.stderr.contains("database or disk is full"),
        "the cause is not named:\n{}",
        run.stderr
    );
    let json_start = run
        .stdout
        .find('{')
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let report: serde_json::Value = serde_json::from_str(&run.stdout[json_start..]).unwrap();
    assert_eq!(report["task"], "a", "{report:#}");
    // Round 1, committed before the disk filled, is there and done.
    let rounds = report["round"].as_u64().unwrap();
    assert!(rounds >= 1, "{report:#}");
}

#[test]
fn git_missing_from_path_is_an_environment_failure() {
    let world = world();
    // A PATH with sh and the agent's tools, but no git.
    let bin = world.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["sh", "cat", "echo"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    let mut command = world.command(&["start", "g", "--message", "hi"]);
    command.env("PATH", &bin);
    let run = Run::from(command.output().unwrap());
    environment_failure(&run, "failed to run git");
    assert!(!world.worktree("g").exists());
}

/// Runs `ganger args` with the store `store` (`None`: the repository's SQLite file) and, when
/// `lost` names a step, the store's answer to it lost after its commit (a debug build's fault
/// point).
fn with_answer_lost(world: &World, store: Option<&str>, lost: &str, args: &[&str]) -> Run {
    let mut command = world.command(args);
    if let Some(url) = store {
        command.env("GANGER_STORE", url);
    }
    command.env("GANGER_FAULT_ANSWER_LOST", lost);
    Run::from(command.output().unwrap())
}

/// A commit whose answer is lost: the connection cut right after it, as a restarted
/// PostgreSQL did to a worker's start. The store has the task and its round; the command took
/// an error. It used to remove the new task's worktree and branch and exit 70, leaving the
/// round to be found `interrupted` (and a queued start of it refused as "exists already");
/// now it asks the store, finds its round recorded, and runs it.
fn a_commit_whose_answer_is_lost_still_runs_its_round(store: Option<&str>) {
    let world = world();
    let started = with_answer_lost(
        &world,
        store,
        "create_task",
        &["start", "t", "--message", "one", "--json"],
    );
    assert_eq!(started.code, 0, "{}\n{}", started.stdout, started.stderr);
    let report = as_json(&started);
    assert_eq!(
        (&report["round"], &report["status"]),
        (&1.into(), &"done".into())
    );
    assert_eq!(
        std::fs::read_to_string(world.worktree("t").join("work.txt")).unwrap(),
        "work\n"
    );
    let fixed = with_answer_lost(
        &world,
        store,
        "begin_round",
        &["fix", "t", "--message", "two", "--json"],
    );
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
    let report = as_json(&fixed);
    assert_eq!(
        (&report["round"], &report["status"]),
        (&2.into(), &"done".into())
    );
    // Two rounds, both done: none left to be settled as interrupted.
    let table = as_json(&with_answer_lost(&world, store, "", &["status", "--json"]));
    let task = &table["tasks"][0];
    assert_eq!(
        (&task["slug"], &task["rounds"], &task["last_status"]),
        (&"t".into(), &2.into(), &"done".into()),
        "{table:#}"
    );
    assert_eq!(
        std::fs::read_to_string(world.worktree("t").join("work.txt")).unwrap(),
        "work\nwork\n"
    );
}

#[test]
fn a_commit_whose_answer_is_lost_still_runs_its_round_on_sqlite() {
    a_commit_whose_answer_is_lost_still_runs_its_round(None);
}

#[test]
fn a_commit_whose_answer_is_lost_still_runs_its_round_on_postgres() {
    let Some(db) = ganger_test_support::PgDatabase::new() else {
        return;
    };
    a_commit_whose_answer_is_lost_still_runs_its_round(Some(&db.url));
}
