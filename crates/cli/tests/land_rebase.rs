//! `[land] mode = "rebase"` (issue 41): a green batch lands as one commit per task, in queue
//! order, with no merge commit, and every one of those commits passed the checks: the
//! prefixes the bisection did not run are checked before the base moves. A task that is red
//! without the tasks after it makes the batch land as its one tested merge commit instead.
//! Real git, the real `ganger` and the `command` agent, whose prompt is a shell script.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::land_world::{command_world, start};
use ganger_test_support::World;
use serde_json::Value;

/// A world whose check fails in the lander's scratch worktree where `needs-b` is and `b.txt`
/// is not (in a task's worktree it passes: each task is green alone).
fn world() -> World {
    let check = "case \"$PWD\" in */.ganger/land/*) test ! -e needs-b || test -e b.txt;; esac";
    command_world(
        "eval \"$(cat)\"",
        &format!(
            "\n[[checks]]\nname = \"tests\"\ncommand = {}\n\n[land]\nmode = \"rebase\"\n",
            serde_json::to_string(check).unwrap()
        ),
    )
}

fn land_run(world: &World, slugs: &[&str]) -> Value {
    let mut args = vec!["land"];
    args.extend(slugs);
    args.extend(["--run", "--json"]);
    let run = world.ganger(&args);
    run.expect_code(0);
    run.json()
}

/// Each commit main gained since `since`, oldest first, as (its parents, its subject).
fn gained(world: &World, since: &str) -> Vec<(usize, String)> {
    let listed = world.git(&[
        "log",
        "--reverse",
        "--format=%P%x09%s",
        &format!("{since}..main"),
    ]);
    listed
        .lines()
        .map(|line| {
            let (parents, subject) = line.split_once('\t').unwrap();
            (parents.split(' ').count(), subject.to_owned())
        })
        .collect()
}

#[test]
fn rebase_lands_one_checked_commit_per_task_in_order_and_no_merge() {
    let world = world();
    let start_head = world.git(&["rev-parse", "main"]);
    for slug in ["a", "b", "c"] {
        start(&world, slug, &format!("echo {slug} > {slug}.txt"));
    }
    let report = land_run(&world, &["a", "b", "c"]);
    let batch = &report["batches"][0];
    assert_eq!(batch["outcome"], "landed", "{report}");
    // The whole batch, then the prefixes the bisection never ran: a, then a + b.
    assert_eq!(batch["check_runs"], 3, "{report}");
    let commits = gained(&world, &start_head);
    let expected: Vec<(usize, String)> = ["a", "b", "c"]
        .iter()
        .map(|s| (1, format!("{s}: the work of task {s} (round 1)")))
        .collect();
    assert_eq!(commits, expected);
    // Each commit holds the batch up to its task.
    assert_eq!(
        world.git(&["ls-tree", "--name-only", "main~2"]),
        ".gitignore\nREADME.md\na.txt"
    );
    assert_eq!(
        world.git(&["ls-tree", "--name-only", "main"]),
        ".gitignore\nREADME.md\na.txt\nb.txt\nc.txt"
    );
    assert_eq!(batch["commit"], world.git(&["rev-parse", "main"]));
}

#[test]
fn a_task_red_without_the_tasks_after_it_lands_the_batch_as_its_merge_commit() {
    let world = world();
    let start_head = world.git(&["rev-parse", "main"]);
    // a alone fails the check (it needs b), a + b passes.
    start(&world, "b", "echo b > b.txt");
    start(&world, "a", "echo a > needs-b");
    let report = land_run(&world, &["a", "b"]);
    let batch = &report["batches"][0];
    assert_eq!(batch["outcome"], "landed", "{report}");
    assert_eq!(batch["check_runs"], 2, "{report}");
    let commits = gained(&world, &start_head);
    assert_eq!(commits.len(), 3, "{commits:?}");
    let (parents, subject) = commits.last().unwrap();
    assert_eq!(*parents, 3, "{commits:?}");
    assert!(subject.starts_with("Land batch 1 into main"), "{subject}");
}

/// How many commits of main say they were rebased from `commit`.
fn copies_of(world: &World, commit: &str) -> usize {
    let found = world.git(&[
        "log",
        "-F",
        "--format=%H",
        &format!("--grep=rebased from {commit}."),
        "main",
    ]);
    found.lines().count()
}

/// The guard against landing twice sees a task's rebased copy: a task whose copy the base has
/// (here made the way a lander paused past its lease would have: the task's change on the
/// base, saying what it was rebased from) is recorded landed without a second copy, and
/// queueing it again is refused.
#[test]
fn a_task_whose_rebased_copy_the_base_has_is_not_landed_twice() {
    let world = world();
    start(&world, "a", "echo a > a.txt");
    start(&world, "b", "echo b > b.txt");
    let queued = land_run(&world, &["a"]);
    assert_eq!(queued["batches"][0]["landed"], serde_json::json!(["a"]));
    let a = world.git(&["rev-parse", "agent/a"]);
    assert_eq!(copies_of(&world, &a), 1);
    let again = world.ganger(&["land", "a"]);
    again.expect_code(2);
    assert!(again.stderr.contains("nothing to land"), "{}", again.stderr);

    world.ganger(&["land", "b"]).expect_code(0);
    let b = world.git(&["rev-parse", "agent/b"]);
    world.git(&["cherry-pick", "--allow-empty", "-x", &b]);
    world.git(&[
        "commit",
        "--amend",
        "-q",
        "-m",
        &format!("b: the work of task b\n\nLanded by ganger land in batch 9 into main, rebased from {b}.\n"),
    ]);
    let head = world.git(&["rev-parse", "main"]);
    let report = land_run(&world, &[]);
    let batch = &report["batches"][0];
    assert_eq!(batch["landed"], serde_json::json!(["b"]), "{report:#}");
    assert_eq!(world.git(&["rev-parse", "main"]), head, "{report:#}");
    assert_eq!(copies_of(&world, &b), 1);
}
