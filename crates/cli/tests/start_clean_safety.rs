//! What a careless or hostile user found by trying ganger from outside (issue 13), for the
//! start of a task, its worktree and `clean`: branch and base names that git would read as
//! options, `clean` racing a `fix`, a start killed in its first milliseconds, `clean --force`
//! on a damaged store, a worktree replaced by a link to the main checkout, settings and briefs
//! that only failed once the task was made. Each test names the defect it holds fixed; with
//! `GANGER_TEST_BIN` pointing at an older build, the same tests show the defect.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "the tests run ganger in the background to race or kill it"
)]

use ganger_test_support::{Run, World, wait_until};
use std::process::Stdio;
use std::time::Duration;

/// An agent that reads its prompt, writes `work.txt` after `delay` seconds and says it is done.
fn world_with_worker(delay: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        &format!("cat >/dev/null; sleep {delay}; echo work >> work.txt; echo 'DONE: wrote'"),
        "",
        "",
    );
    world
}

/// Every ref of the repository with what it points at, and its worktrees (without the ones
/// the pool keeps ready, with `[trees] pool = N`).
fn refs_and_worktrees(world: &World) -> (String, String) {
    (
        world.git(&["for-each-ref", "--format=%(refname) %(objectname)"]),
        world.worktrees(),
    )
}

/// The error is one line (with at most a hint after it) and not git's usage text.
#[track_caller]
fn one_line_error(run: &Run) {
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        !lines.is_empty() && lines.len() <= 2 && lines[0].starts_with("error: "),
        "not a one-line error:\n{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("usage:"),
        "git's usage text:\n{}",
        run.stderr
    );
}

/// Issue 13.1: `--branch=-D` reached `git worktree add -b`, which passed it to `git branch`
/// and deleted the unmerged branch `feature`; `--branch=-f` moved the base branch;
/// `--base=--orphan` made a task on an unborn branch.
#[test]
fn branches_and_bases_that_look_like_options_change_nothing() {
    let world = world_with_worker("0");
    world.git(&["checkout", "-q", "-b", "feature"]);
    world.write("f.txt", "w\n");
    world.git(&["add", "f.txt"]);
    world.git(&["commit", "-q", "-m", "w"]);
    world.git(&["checkout", "-q", "main"]);
    let before = refs_and_worktrees(&world);
    let cases: &[&[&str]] = &[
        &["--branch=-D", "--base", "feature"],
        &["--branch=-f", "--base", "feature"],
        &["--branch=--orphan"],
        &["--base=--orphan"],
        &["--base=-D"],
        &["--branch", "a..b"],
        &["--branch", "HEAD"],
        &["--branch", "x.lock"],
        &["--base", "no-such-branch"],
        &["--base", "main^{tree}"],
    ];
    for case in cases {
        let mut args = vec!["start", "x", "--message", "hi"];
        args.extend_from_slice(case);
        let run = world.ganger(&args);
        run.expect_code(2);
        one_line_error(&run);
        assert_eq!(refs_and_worktrees(&world), before, "{case:?} changed refs");
        assert!(!world.worktree("x").exists(), "{case:?} made the worktree");
        assert!(
            world.ganger(&["status", "x"]).code == 2,
            "{case:?} made the task"
        );
    }
    // A fleet file's bases are checked before anything is queued.
    for base in ["--orphan", "-D", "no-such-branch"] {
        let file = world.root().join("fleet.toml");
        std::fs::write(
            &file,
            format!("[[task]]\nslug = \"f\"\nmessage = \"hi\"\nbase = {base:?}\n"),
        )
        .unwrap();
        let run = world.ganger(&["fleet", "submit", file.to_str().unwrap()]);
        run.expect_code(2);
        one_line_error(&run);
        assert!(run.stderr.contains("task f: base"), "{}", run.stderr);
        assert_eq!(
            refs_and_worktrees(&world),
            before,
            "fleet base {base:?} changed refs"
        );
    }
    let queued = rusqlite::Connection::open(world.repo.join(".ganger/state.db"))
        .map(|db| {
            db.query_row("SELECT count(*) FROM queue", [], |row| row.get::<_, i64>(0))
                .unwrap_or(0)
        })
        .unwrap_or(0);
    assert_eq!(queued, 0, "a fleet with a bad base was queued");
    // A good branch name and a base given by commit still work.
    let feature = world.git(&["rev-parse", "feature"]);
    world
        .ganger(&[
            "start",
            "x",
            "--message",
            "hi",
            "--branch",
            "work/x",
            "--base",
            &feature,
        ])
        .expect_code(0);
    assert_eq!(world.git(&["rev-parse", "work/x"]), feature);
    assert_eq!(world.git(&["rev-parse", "feature"]), feature);
}

/// Issue 13.2: `clean` removed the worktree and branch under a `fix` that was starting, and
/// the round then reported `done` with its writes lost. Now the two exclude each other: the
/// fix runs in a worktree that stays, or it is refused; a round is never `done` with its work
/// gone.
#[test]
fn clean_racing_fix_never_loses_a_done_round() {
    for force in [false, true] {
        for attempt in 0..4 {
            let world = world_with_worker("1");
            world
                .ganger(&["start", "t", "--message", "hi"])
                .expect_code(0);
            let worktree = world.worktree("t");
            std::fs::remove_file(worktree.join("work.txt")).unwrap();
            let mut clean_args = vec!["clean", "t"];
            if force {
                clean_args.push("--force");
            }
            let clean = world
                .command(&clean_args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_micros(500 * attempt));
            let fix = world.ganger(&["fix", "t", "--message", "again", "--json"]);
            let clean = Run::from(clean.wait_with_output().unwrap());
            assert!(
                clean.code == 0,
                "clean failed: {}{}",
                clean.stdout,
                clean.stderr
            );
            if fix.code == 0 {
                // The round said done: its work must be there.
                assert!(
                    worktree.join("work.txt").is_file(),
                    "force {force}, attempt {attempt}: fix reported done but work.txt is gone\n\
                     fix: {}\nclean: {}",
                    fix.stdout,
                    clean.stdout
                );
            } else {
                assert!(
                    fix.code == 2 || fix.code == 1,
                    "fix exited {}: {}",
                    fix.code,
                    fix.stderr
                );
            }
            // Whatever happened, the store never holds a done round whose work is gone.
            let status = world.ganger(&["status", "t", "--json"]);
            let report = status.json();
            if report["status"] == "done" && report["round"] == 2 {
                assert!(
                    worktree.join("work.txt").is_file(),
                    "round 2 is done but work.txt is gone: {report:#}"
                );
            }
        }
    }
}

/// A round whose worktree vanished while it ran is never `done`.
#[test]
fn a_round_whose_worktree_vanished_is_not_done() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // The agent removes its own worktree, then says it is done.
    world.use_command_agent(
        "cat >/dev/null; d=$(pwd); cd /; rm -rf \"$d\"; echo 'DONE: gone'",
        "",
        "",
    );
    let run = world.ganger(&["start", "v", "--message", "hi", "--json"]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    assert!(
        report["reason"].as_str().unwrap().contains("is gone"),
        "{report:#}"
    );
}

/// Issue 13.9: a foreground `start` killed in its first milliseconds left a worktree and a
/// branch with no task: the next `start` was refused and `clean` never saw them. Now the start
/// is recorded first, and `start` again or `clean` settles what it left.
#[test]
fn a_start_killed_early_is_settled_by_start_again_and_by_clean() {
    let world = world_with_worker("0");
    // Deterministic: killed while paused right after the worktree was made (debug builds).
    let mut first = world.command(&["start", "k", "--message", "hi"]);
    first
        .env("GANGER_FAULT_PAUSE", "start-after-worktree:5000")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = first.spawn().unwrap();
    let made = wait_until(Duration::from_secs(10), || world.worktree("k").exists());
    std::thread::sleep(Duration::from_millis(50));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(made, "the worktree was never made");
    // Start again: the half-made start is settled, and this one works.
    world
        .ganger(&["start", "k", "--message", "hi"])
        .expect_code(0);

    // Killed at every moment of its first 40 ms: start again, then clean, leave nothing
    // half made.
    for (i, delay) in (0..40u64).step_by(2).enumerate() {
        let slug = format!("e{i}");
        let mut child = world
            .command(&["start", &slug, "--message", "hi"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        child.wait().unwrap();
        // A start killed after it handed its claim on (to its round's host, or for the moment
        // between a child's fork and its exec) is still being started by that holder: asked
        // again until the holder is done, as a user would.
        let mut again = world.ganger(&["start", &slug, "--message", "hi"]);
        let held = |run: &ganger_test_support::Run| {
            run.stderr.contains(&format!(
                "task {slug} is being started by another ganger command"
            ))
        };
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while held(&again) && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(200));
            again = world.ganger(&["start", &slug, "--message", "hi"]);
        }
        if again.code != 0 {
            // Refused only because the first start got as far as recording its task.
            assert!(
                again
                    .stderr
                    .contains(&format!("task {slug} exists already")),
                "killed after {delay} ms, start again: {}",
                again.stderr
            );
            world.ganger(&["status", &slug]).expect_code(0);
        }
    }
    // A start killed and never retried is settled by clean.
    let mut child = world.command(&["start", "late", "--message", "hi"]);
    child
        .env("GANGER_FAULT_PAUSE", "start-after-worktree:5000")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = child.spawn().unwrap();
    assert!(wait_until(Duration::from_secs(10), || world
        .worktree("late")
        .exists()));
    std::thread::sleep(Duration::from_millis(50));
    // A start under way is no leftover.
    let status = world.ganger(&["status"]);
    assert!(
        !status.stdout.contains("start of late"),
        "{}",
        status.stdout
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // Issue 38.19: until it is settled, `status` and `clean --dry-run` name what it left (they
    // said nothing: "no tasks", "nothing was changed"), and change nothing.
    let worktree = world.worktree("late").display().to_string();
    let status = world.ganger(&["status"]);
    status.expect_code(0);
    assert!(
        status.stdout.contains("start of late") && status.stdout.contains(&worktree),
        "{}",
        status.stdout
    );
    let listed = world.ganger(&["status", "--json"]).json();
    assert_eq!(listed["killed_starts"][0]["slug"], "late", "{listed:#}");
    assert_eq!(listed["killed_starts"][0]["worktree"], worktree.as_str());
    assert_eq!(listed["killed_starts"][0]["branch"], "agent/late");
    let dry = world.ganger(&["clean", "--force", "--dry-run"]);
    dry.expect_code(0);
    assert!(
        dry.stdout.contains("would settle the start of late") && dry.stdout.contains(&worktree),
        "{}",
        dry.stdout
    );
    let dry = world
        .ganger(&["clean", "--force", "--dry-run", "--json"])
        .json();
    assert!(
        dry["settled"][0]
            .as_str()
            .is_some_and(|line| line.contains("late")),
        "{dry:#}"
    );
    assert!(world.worktree("late").exists(), "a dry run removed it");
    assert!(
        world
            .git(&["branch", "--list", "agent/late"])
            .contains("agent/late")
    );
    let clean = world.ganger(&["clean", "--force"]);
    clean.expect_code(0);
    assert!(
        clean.stdout.contains("settled the start of late"),
        "{}",
        clean.stdout
    );
    assert_eq!(
        world.worktree_count(),
        1,
        "worktrees left: {}",
        world.worktrees()
    );
    assert_eq!(
        world.git(&["branch", "--list", "agent/*"]),
        "",
        "branches left"
    );
}

/// Issue 13.10: with the journal's root page damaged, each `clean --force` removed one more
/// task's worktree and branch, then failed to record it. Now the clean is recorded first, and
/// a store that cannot record it has nothing removed.
#[test]
fn clean_on_a_damaged_store_removes_nothing() {
    let world = world_with_worker("0");
    for slug in ["a", "b", "c"] {
        world
            .ganger(&["start", slug, "--message", "hi"])
            .expect_code(0);
    }
    let db = world.repo.join(".ganger/state.db");
    let (root, page_size) = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let root: u64 = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'journal'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        let page_size: u64 = conn
            .query_row("PRAGMA page_size", [], |row| row.get(0))
            .unwrap();
        (root, page_size)
    };
    let mut bytes = std::fs::read(&db).unwrap();
    let at = ((root - 1) * page_size) as usize;
    for b in &mut bytes[at..at + page_size as usize] {
        *b = 0xA5;
    }
    std::fs::write(&db, bytes).unwrap();
    for _ in 0..3 {
        let run = world.ganger(&["clean", "--force"]);
        assert_ne!(run.code, 0, "clean succeeded on a damaged store");
        assert!(
            run.stderr.contains("malformed"),
            "the cause is not named: {}",
            run.stderr
        );
        for slug in ["a", "b", "c"] {
            assert!(
                world.worktree(slug).is_dir(),
                "the worktree of {slug} was removed"
            );
            assert_ne!(
                world.git(&["branch", "--list", &format!("agent/{slug}")]),
                ""
            );
        }
    }
}

/// Issue 13.15: a task's worktree replaced by a symbolic link to the main checkout had the
/// next round's agent work in the main checkout.
#[test]
fn a_worktree_replaced_by_a_link_to_the_main_checkout_runs_nothing() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo ran > ran.txt; echo 'DONE: ran'",
        "",
        "",
    );
    world
        .ganger(&["start", "s", "--message", "hi"])
        .expect_code(0);
    let worktree = world.worktree("s");
    std::fs::rename(&worktree, world.root().join("moved-away")).unwrap();
    std::os::unix::fs::symlink(&world.repo, &worktree).unwrap();
    let run = world.ganger(&["fix", "s", "--message", "again"]);
    run.expect_code(2);
    one_line_error(&run);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert!(
        !world.repo.join("ran.txt").exists(),
        "the agent ran in the main checkout"
    );
    // Back in place but on another branch: refused too, naming the branch.
    std::fs::remove_file(&worktree).unwrap();
    std::fs::rename(world.root().join("moved-away"), &worktree).unwrap();
    world.git_in(&worktree, &["checkout", "-q", "-b", "elsewhere"]);
    let run = world.ganger(&["fix", "s", "--message", "again"]);
    run.expect_code(2);
    assert!(run.stderr.contains("agent/s"), "{}", run.stderr);
}

/// Issue 13.14: `prompt = "pipe"`, or a NUL byte in a brief with `prompt = "argv"`, made the
/// task and its worktree and then failed the round with exit 1.
#[test]
fn settings_and_briefs_the_agent_cannot_take_are_refused_before_anything_is_made() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent("cat >/dev/null; echo ok", "", "prompt = \"pipe\"");
    let run = world.ganger(&["start", "p", "--message", "hi"]);
    run.expect_code(2);
    one_line_error(&run);
    assert!(run.stderr.contains("[agents.command]"), "{}", run.stderr);
    assert!(!world.worktree("p").exists());

    world.write(
        "ganger.toml",
        "[defaults]\nagent = \"command\"\n\n[agents.command]\nargv = [\"echo\", \"{prompt}\"]\nprompt = \"argv\"\n",
    );
    let brief = world.root().join("brief.md");
    std::fs::write(&brief, b"a\0b\n").unwrap();
    let run = world.ganger(&["start", "n", "--brief", brief.to_str().unwrap()]);
    run.expect_code(2);
    one_line_error(&run);
    assert!(run.stderr.contains("NUL"), "{}", run.stderr);
    assert!(!world.worktree("n").exists());
    assert_eq!(world.git(&["branch", "--list", "agent/*"]), "");
}
