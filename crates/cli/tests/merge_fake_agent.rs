//! Merging and overlaps, fast: the stand-in `opencode` (test-support's `fake-opencode.sh`)
//! plays the worker; it appends its prompt's first line to `fake.txt` in its worktree. The
//! real OpenCode's merges and rewinds are in `merge_rewind.rs`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, wait_until};
use serde_json::json;
use std::time::Duration;

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
}

#[test]
fn status_names_running_tasks_that_change_the_same_files() {
    let world = world();
    // A finished task changing the same file is not running: no overlap with it.
    world
        .ganger(&["start", "done", "--message", "finished"])
        .expect_code(0);
    for slug in ["t1", "t2"] {
        world
            .ganger(&["start", slug, "--message", "sleep 60", "--detach"])
            .expect_code(0);
    }
    assert!(wait_until(Duration::from_secs(30), || {
        ["t1", "t2"]
            .iter()
            .all(|slug| world.worktree(slug).join("fake.txt").is_file())
    }));
    let table = world.ganger(&["status", "--json"]);
    table.expect_code(0);
    assert_eq!(
        table.json()["overlaps"],
        json!([{ "tasks": ["t1", "t2"], "files": ["fake.txt"] }])
    );
    let human = world.ganger(&["status"]);
    assert!(
        human
            .stdout
            .contains("overlap: t1 and t2 both change fake.txt\n"),
        "{}",
        human.stdout
    );
    // Neither a merge nor a rewind touches a task whose round runs.
    for args in [["merge", "t1", "", ""], ["rewind", "t1", "--to", "1"]] {
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        let run = world.ganger(&args);
        run.expect_code(2);
        assert!(
            run.stderr
                .starts_with("error: round 1 of t1 is still running"),
            "{}",
            run.stderr
        );
    }
    world.ganger(&["cancel", "t1"]).expect_code(0);
    let table = world.ganger(&["status", "--json"]).json();
    assert_eq!(table["overlaps"], json!([]));
    world.ganger(&["cancel", "t2"]).expect_code(0);
}

#[test]
fn squash_makes_one_commit_on_the_base() {
    let world = world();
    world
        .ganger(&["start", "s", "--message", "squash me"])
        .expect_code(0);
    world
        .ganger(&["fix", "s", "--message", "and again"])
        .expect_code(0);
    let before = world.git(&["rev-parse", "main"]);
    let merged = world.ganger(&["merge", "s", "--squash", "--json"]);
    merged.expect_code(0);
    assert_eq!(merged.json()["mode"], "squash");
    // The journal has it.
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    let (kind, detail): (String, String) = db
        .query_row(
            "SELECT kind, detail FROM journal ORDER BY id DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(kind, "merged");
    let detail: serde_json::Value = serde_json::from_str(&detail).unwrap();
    assert_eq!(detail["mode"], "squash");
    assert_eq!(detail["rounds"], json!([1, 2]));
    assert_eq!(world.git(&["rev-parse", "main^"]), before);
    assert_eq!(world.git(&["rev-list", "--count", "--merges", "main"]), "0");
    assert_eq!(
        world.git(&["log", "-1", "--format=%s", "main"]),
        "s: the work of task s (rounds 1-2)"
    );
    assert_eq!(
        std::fs::read_to_string(world.repo.join("fake.txt")).unwrap(),
        "squash me\nand again\n"
    );
    // Merged once; a second merge has nothing to bring.
    let again = world.ganger(&["merge", "s"]);
    again.expect_code(2);
    assert!(
        again.stderr.contains("task s has nothing to merge"),
        "{}",
        again.stderr
    );
}

#[test]
fn rebase_replays_the_task_onto_the_base_and_fast_forwards() {
    let world = world();
    world
        .ganger(&["start", "r", "--message", "rebase me"])
        .expect_code(0);
    world.write("other.txt", "other\n");
    world.git(&["add", "other.txt"]);
    world.git(&["commit", "-q", "-m", "meanwhile on main"]);
    let moved = world.git(&["rev-parse", "main"]);
    let merged = world.ganger(&["merge", "r", "--rebase", "--json"]);
    merged.expect_code(0);
    let report = merged.json();
    // A straight line: main's new tip is the task's commit, replayed onto the moved base.
    assert_eq!(world.git(&["rev-parse", "main^"]), moved);
    assert_eq!(
        world.git(&["rev-parse", "main"]),
        report["commit"].as_str().unwrap()
    );
    assert_eq!(
        world.git(&["rev-parse", "agent/r"]),
        world.git(&["rev-parse", "main"])
    );
    assert_eq!(
        world.git(&["log", "-1", "--format=%an %s", "main"]),
        "Test r: the work of task r (round 1)"
    );
    // The task's worktree follows its branch and has nothing left uncommitted.
    let worktree = world.worktree("r");
    assert_eq!(world.git_in(&worktree, &["status", "--porcelain"]), "");
    assert!(worktree.join("other.txt").is_file());
    assert!(world.repo.join("fake.txt").is_file());
}

#[test]
fn a_rewind_that_cannot_fork_starts_a_new_session_with_a_summary() {
    let world = world();
    let first = world.ganger(&["start", "w", "--message", "one", "--json"]);
    first.expect_code(0);
    let session = first.json()["session"].as_str().unwrap().to_owned();
    world
        .ganger(&["fix", "w", "--message", "two"])
        .expect_code(0);
    let fake = world.worktree("w").join("fake.txt");
    assert_eq!(std::fs::read_to_string(&fake).unwrap(), "one\ntwo\n");

    // The stand-in has no `export`: the fork fails, and says why.
    let rewound = world.ganger(&["rewind", "w", "--to", "1", "--json"]);
    rewound.expect_code(0);
    let report = rewound.json();
    assert_eq!(report["session"], "new");
    assert!(
        report["fork_error"]
            .as_str()
            .unwrap()
            .contains("`opencode export` failed"),
        "{report:#}"
    );
    assert_eq!(std::fs::read_to_string(&fake).unwrap(), "one\n");

    let third = world.ganger(&["fix", "w", "--message", "three", "--json"]);
    third.expect_code(0);
    assert_ne!(third.json()["session"], session.as_str());
    let prompt =
        std::fs::read_to_string(world.repo.join(".ganger/tasks/w/round-3.prompt.md")).unwrap();
    assert!(
        prompt.starts_with("This task continues earlier work"),
        "{prompt}"
    );
    assert!(prompt.contains("Round 1 (done):\n> one\n"), "{prompt}");
    assert!(prompt.contains("> Done: one (title w)"), "{prompt}");
    assert!(
        prompt.ends_with("Now the request of this round:\n\nthree"),
        "{prompt}"
    );
    assert!(!prompt.contains("two"), "{prompt}");
    // The note was for that one round.
    let fourth = world.ganger(&["fix", "w", "--message", "four"]);
    fourth.expect_code(0);
    let prompt =
        std::fs::read_to_string(world.repo.join(".ganger/tasks/w/round-4.prompt.md")).unwrap();
    assert_eq!(prompt, "four");
}

#[test]
fn a_rewind_needs_a_round_with_a_snapshot() {
    let world = world();
    world
        .ganger(&["start", "n", "--message", "one"])
        .expect_code(0);
    world
        .ganger(&["fix", "n", "--message", "two"])
        .expect_code(0);
    // A round whose end could not be snapshotted (here: its snapshot forgotten).
    let db = rusqlite::Connection::open(world.repo.join(".ganger/state.db")).unwrap();
    db.execute(
        "UPDATE rounds SET snapshot_after = NULL WHERE number = 1",
        [],
    )
    .unwrap();
    drop(db);
    let run = world.ganger(&["rewind", "n", "--to", "1"]);
    run.expect_code(2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("round 1 of n has no snapshot to go back to"),
        "{}",
        run.stderr
    );
    let fake = world.worktree("n").join("fake.txt");
    assert_eq!(std::fs::read_to_string(fake).unwrap(), "one\ntwo\n");
    let status = world.ganger(&["status", "n", "--json"]).json();
    assert_eq!(status["rewound"], false);
}

#[test]
fn merge_refuses_a_task_whose_last_round_failed_its_checks() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // Passes once fake.txt has two lines: after the second round.
    world.use_fake_agent(
        "",
        "[[checks]]\nname = \"two-lines\"\ncommand = \"test $(wc -l < fake.txt) -ge 2\"\n",
    );
    world
        .ganger(&["start", "k", "--message", "one"])
        .expect_code(1);
    let main = world.git(&["rev-parse", "main"]);
    let refused = world.ganger(&["merge", "k"]);
    refused.expect_code(2);
    assert!(
        refused
            .stderr
            .contains("round 1 of k did not pass (checks failed: two-lines)"),
        "{}",
        refused.stderr
    );
    assert_eq!(world.git(&["rev-parse", "main"]), main);
    assert_eq!(
        world.git(&["rev-parse", "agent/k"]),
        main,
        "nothing committed"
    );
    world
        .ganger(&["fix", "k", "--message", "two"])
        .expect_code(0);
    world.ganger(&["merge", "k"]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(world.repo.join("fake.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn a_base_not_checked_out_is_moved_without_touching_the_checkout() {
    let world = world();
    world
        .ganger(&["start", "o", "--message", "elsewhere"])
        .expect_code(0);
    world.git(&["checkout", "-q", "-b", "other"]);
    let main = world.git(&["rev-parse", "main"]);
    world.ganger(&["merge", "o"]).expect_code(0);
    assert_eq!(world.git(&["rev-parse", "main^1"]), main);
    assert_eq!(world.git(&["branch", "--show-current"]), "other");
    assert!(
        !world.repo.join("fake.txt").exists(),
        "the checkout is on another branch"
    );
    assert_eq!(world.git(&["show", "main:fake.txt"]), "elsewhere");
}

#[test]
fn markers_left_by_the_resolving_round_leave_the_merge_for_later() {
    let world = world();
    world
        .ganger(&["start", "u", "--message", "task line"])
        .expect_code(0);
    world.write("fake.txt", "main line\n");
    world.git(&["add", "fake.txt"]);
    world.git(&["commit", "-q", "-m", "main adds fake.txt"]);
    let main = world.git(&["rev-parse", "main"]);
    // The stand-in only appends a line: the markers stay.
    let run = world.ganger(&["merge", "u", "--fix", "--json"]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["outcome"], "unresolved", "{report:#}");
    assert_eq!(report["conflicts"], json!(["fake.txt"]));
    assert_eq!(report["fix_round"], 2);
    assert_eq!(world.git(&["rev-parse", "main"]), main);
    let worktree = world.worktree("u");
    // Mid-merge: main is being merged into the task's branch.
    assert_eq!(world.git_in(&worktree, &["rev-parse", "MERGE_HEAD"]), main);
    let text = std::fs::read_to_string(worktree.join("fake.txt")).unwrap();
    assert!(text.contains("<<<<<<< "), "{text}");

    // Someone resolves it; a round passes; the next merge takes the resolution.
    std::fs::write(worktree.join("fake.txt"), "main line\ntask line\n").unwrap();
    world
        .ganger(&["fix", "u", "--message", "checked"])
        .expect_code(0);
    let merged = world.ganger(&["merge", "u", "--json"]);
    merged.expect_code(0);
    let report = merged.json();
    assert_eq!(report["outcome"], "merged", "{report:#}");
    assert!(report["resolution_commit"].is_string());
    assert_eq!(
        std::fs::read_to_string(world.repo.join("fake.txt")).unwrap(),
        "main line\ntask line\nchecked\n"
    );
}
