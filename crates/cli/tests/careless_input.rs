//! The smaller defects of issue 13 (item 18), each as a careless user met it: limits of 0, a
//! configuration error without its key or line, a start in a repository with no commits, a
//! model name that cannot be one, commander names that are empty or span lines, a session
//! adopted twice or read as an option, a key file holding an assignment, a merge after the
//! task's branch was deleted by hand, an emptied store, a parallel start's losers, and a round
//! host that met a locked store at its end. Each is refused with one line and exit 2 with
//! nothing made, or ends as it should.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{Run, World, wait_until};
use std::time::Duration;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo work > work.txt; echo 'DONE: ok'",
        "",
        "",
    );
    world
}

#[track_caller]
fn refused(run: &Run, needle: &str) {
    run.expect_code(2);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains(needle),
        "expected {needle:?} in the first line:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.lines().count() <= 2,
        "more than an error and a hint:\n{}",
        run.stderr
    );
}

fn nothing_made(world: &World) {
    assert_eq!(world.git(&["branch", "--list", "agent/*"]), "");
    assert_eq!(world.worktree_count(), 1, "{}", world.worktrees());
}

#[test]
fn limits_of_zero_are_refused() {
    let world = world();
    for args in [
        ["start", "z", "--message", "hi", "--timeout", "0"],
        ["start", "z", "--message", "hi", "--stall", "0s"],
    ] {
        refused(&world.ganger(&args), "a limit of 0");
    }
    let mut toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    toml = toml.replace("[defaults]\n", "[defaults]\nstall = \"0s\"\n");
    world.write("ganger.toml", &toml);
    refused(
        &world.ganger(&["start", "z", "--message", "hi"]),
        "defaults.stall",
    );
    nothing_made(&world);
}

#[test]
fn a_configuration_error_names_its_line_and_key() {
    let world = world();
    let toml = std::fs::read_to_string(world.repo.join("ganger.toml")).unwrap();
    world.write(
        "ganger.toml",
        &toml.replace("[defaults]\n", "[defaults]\ntimeout = true\n"),
    );
    let run = world.ganger(&["status"]);
    refused(&run, "line 2 (timeout)");
    assert!(!run.stderr.contains("untagged"), "{}", run.stderr);
    assert!(run.stderr.contains("duration"), "{}", run.stderr);
}

#[test]
fn a_start_in_a_repository_without_commits_makes_nothing() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let empty = world.root().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    world.git_in(&empty, &["init", "-q", "-b", "main"]);
    std::fs::write(
        empty.join("ganger.toml"),
        "[defaults]\nagent = \"command\"\n\n[agents.command]\nargv = [\"true\"]\n",
    )
    .unwrap();
    let mut command = world.command(&["start", "e", "--message", "hi"]);
    command.current_dir(&empty);
    let run = Run::from(command.output().unwrap());
    refused(&run, "names no commit");
    assert!(run.stderr.contains("no commits yet"), "{}", run.stderr);
    assert!(!empty.join(".ganger").exists(), ".ganger was made");
}

#[test]
fn model_names_that_cannot_be_models_are_bad_input_not_missing_models() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    refused(
        &world.ganger(&["start", "m", "--message", "hi", "-m", ""]),
        "the model name is empty",
    );
    refused(
        &world.ganger(&["start", "m", "--message", "hi", "-m", "noslash"]),
        "provider/model",
    );
    nothing_made(&world);
}

#[test]
fn commander_names_must_be_names() {
    let world = world();
    for name in ["", "  ", "alice\nbob", "a\u{1b}[2Jb"] {
        let run = world.ganger(&["start", "c", "--message", "hi", "--as", name]);
        run.expect_code(2);
        assert!(
            run.stderr.contains("commander's name"),
            "{name:?}: {}",
            run.stderr
        );
    }
    let mut command = world.command(&["status"]);
    command.env("GANGER_COMMANDER", "alice\nbob");
    let run = Run::from(command.output().unwrap());
    refused(&run, "GANGER_COMMANDER");
    nothing_made(&world);
}

#[test]
fn a_session_is_never_an_option_and_is_adopted_once() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    for (branch, dir) in [("hand1", "../hand1"), ("hand2", "../hand2")] {
        world.git(&["worktree", "add", "-q", "-b", branch, dir]);
    }
    let wt = |n: u32| {
        world
            .root()
            .join(format!("hand{n}"))
            .to_string_lossy()
            .into_owned()
    };
    let run = world.ganger(&[
        "adopt",
        "a",
        "--agent",
        "opencode",
        "--session=--help",
        "--worktree",
        &wt(1),
    ]);
    refused(&run, "is not a session id");
    world
        .ganger(&[
            "adopt",
            "a",
            "--agent",
            "opencode",
            "--session",
            "ses_one",
            "--worktree",
            &wt(1),
        ])
        .expect_code(0);
    let run = world.ganger(&[
        "adopt",
        "b",
        "--agent",
        "opencode",
        "--session",
        "ses_one",
        "--worktree",
        &wt(2),
    ]);
    refused(&run, "is task a's already");
}

#[test]
fn a_key_file_holding_an_assignment_is_refused_without_printing_the_key() {
    let world = world();
    let file = world.root().join("key");
    std::fs::write(&file, "MOCK_API_KEY=sk-secret-0123456789\n").unwrap();
    let key = format!("mock={}", file.display());
    let run = world.ganger(&["start", "k", "--message", "hi", "--key", &key]);
    refused(&run, "holds an assignment (MOCK_API_KEY=...)");
    assert!(!run.stderr.contains("sk-secret"), "{}", run.stderr);
    nothing_made(&world);
}

#[test]
fn merge_after_the_branch_was_deleted_by_hand_commits_nothing() {
    let world = world();
    world
        .ganger(&["start", "d", "--message", "hi"])
        .expect_code(0);
    world.git(&["update-ref", "-d", "refs/heads/agent/d"]);
    let commits_before = world.git(&["rev-list", "--all", "--count"]);
    let run = world.ganger(&["merge", "d"]);
    refused(&run, "is gone");
    assert_eq!(world.git(&["rev-list", "--all", "--count"]), commits_before);
    assert!(
        !run.stderr.contains("fatal:"),
        "git's own text: {}",
        run.stderr
    );
}

#[test]
fn an_emptied_store_is_refused_while_tasks_files_remain() {
    let world = world();
    world
        .ganger(&["start", "s", "--message", "hi"])
        .expect_code(0);
    let db = world.repo.join(".ganger/state.db");
    for extra in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{extra}", db.display()));
    }
    std::fs::write(&db, b"").unwrap();
    refused(&world.ganger(&["status"]), "records are lost");
    refused(
        &world.ganger(&["start", "t", "--message", "hi"]),
        "records are lost",
    );
    assert_eq!(
        std::fs::metadata(&db).unwrap().len(),
        0,
        "the store was made anew"
    );
    std::fs::remove_file(&db).unwrap();
    refused(&world.ganger(&["status", "s"]), "records are lost");
}

#[test]
fn the_losers_of_a_parallel_start_of_one_slug_are_told_it_is_being_started() {
    let world = world();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let world = &world;
        let handles: Vec<_> = (0..12)
            .map(|_| scope.spawn(move || world.ganger(&["start", "same", "--message", "hi"])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(runs.iter().filter(|r| r.code == 0).count(), 1);
    for run in runs.iter().filter(|r| r.code != 0) {
        run.expect_code(2);
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first == "error: task same is being started by another ganger command"
                || first == "error: task same exists already",
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_round_host_waits_out_a_locked_store_and_records_its_end() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let started = world.root().join("started");
    world.use_command_agent(
        &format!(
            "cat >/dev/null; touch {}; sleep 1; echo 'DONE: finished'",
            started.display()
        ),
        "",
        "",
    );
    world
        .ganger(&["start", "l", "--message", "hi", "--detach"])
        .expect_code(0);
    assert!(wait_until(Duration::from_secs(30), || started.exists()));
    // Another writer holds the store past the host's 10 s wait for it, across the round's end.
    let conn = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(Duration::from_secs(13));
    conn.execute_batch("COMMIT").unwrap();
    let waited = world.ganger(&["wait", "l", "--timeout", "60", "--json"]);
    let report = waited.json();
    assert_eq!(report["status"], "done", "{report:#}");
    assert_eq!(report["done"], "DONE: finished", "{report:#}");
}
