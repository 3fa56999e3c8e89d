//! The pool of worktrees made ahead of time (`[trees] pool = N`, docs/trees.md): a start takes
//! a ready one, which is a real git worktree on the task's branch, and the pool is refilled in
//! the background; a round in it ends exactly as one in a worktree `git worktree add` made; a
//! pool of another base is not used; a start killed after taking one leaves nothing once
//! settled; a `[trees]` setting that cannot be is refused with exit 2 and nothing made.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, wait_until};
use std::time::Duration;

/// Every kind of change a round can make, the same in every task.
const AGENT: &str = "cat >/dev/null; echo changed > src/a.txt; rm src/b.txt; \
    mv src/c.txt src/moved.txt; mkdir -p new/deep; echo deep > new/deep/a.txt; \
    ln -s a.txt src/link; chmod +x src/d.txt; echo 'DONE: changed six things'";

fn pool_world(pool: usize) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    for name in ["a", "b", "c", "d"] {
        world.write(&format!("src/{name}.txt"), &format!("{name}\n"));
    }
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "four files"]);
    set_pool(&world, pool);
    world
}

fn set_pool(world: &World, pool: usize) {
    world.use_command_agent(AGENT, "", &format!("\n[trees]\npool = {pool}\n"));
}

/// The ready pooled worktrees of each base, from `ganger trees --json`.
fn ready(world: &World) -> Vec<(String, u64)> {
    let run = world.ganger(&["trees", "--json"]);
    run.expect_code(0);
    run.json()["bases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["base"].as_str().unwrap().to_owned(),
                b["ready"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Waits until the background filler has made the pool `want` again (so that no filler
/// outlives the test).
fn wait_refilled(world: &World, want: Vec<(String, u64)>) {
    let refilled = wait_until(Duration::from_secs(60), || ready(world) == want);
    assert!(refilled, "the pool is {:?}, not {want:?}", ready(world));
    let quiet = wait_until(Duration::from_secs(30), || {
        !world.repo.join(".ganger/run/trees-fill.again").exists() && world.left_running().is_empty()
    });
    assert!(quiet, "a filler still runs");
}

/// The name of a linked worktree's git record.
fn record_name(world: &World, slug: &str) -> String {
    let dot_git = std::fs::read_to_string(world.worktree(slug).join(".git")).unwrap();
    dot_git.trim().rsplit('/').next().unwrap().to_owned()
}

#[test]
fn a_start_takes_a_ready_worktree_and_the_pool_is_refilled() {
    let world = pool_world(2);
    let fill = world.ganger(&["trees", "fill", "--json"]);
    fill.expect_code(0);
    assert_eq!(fill.json()["made"], 2);
    let head = world.git(&["rev-parse", "HEAD"]);
    assert_eq!(ready(&world), [(head.clone(), 2)]);

    let run = world.ganger(&["start", "pooled", "--message", "change", "--json"]);
    run.expect_code(0);
    assert_eq!(run.json()["status"], "done", "{}", run.stdout);
    // The worktree is the pool's, and a real git worktree on the task's branch.
    assert!(record_name(&world, "pooled").starts_with("ganger-pool-"));
    let listed = world.git(&["worktree", "list", "--porcelain"]);
    let entry = format!("worktree {}\n", world.worktree("pooled").display());
    let at = listed.find(&entry).unwrap_or_else(|| panic!("{listed}"));
    let rest = &listed[at..];
    let block = &rest[..rest.find("\n\n").unwrap_or(rest.len())];
    assert!(block.contains("branch refs/heads/agent/pooled"), "{block}");
    assert!(!block.contains("locked"), "{block}");
    let status = world.git_in(&world.worktree("pooled"), &["status", "--porcelain"]);
    assert!(status.contains("M src/a.txt"), "{status}");
    wait_refilled(&world, vec![(head, 2)]);
}

#[test]
fn a_round_in_a_pooled_worktree_ends_as_in_a_checked_out_one() {
    let world = pool_world(0);
    let plain = world.ganger(&["start", "plain", "--message", "change"]);
    plain.expect_code(0);
    assert!(!record_name(&world, "plain").starts_with("ganger-pool-"));
    assert!(!plain.stdout.contains("from the pool"), "{}", plain.stdout);
    set_pool(&world, 1);
    world.ganger(&["trees", "fill"]).expect_code(0);
    let pooled = world.ganger(&["start", "pooled", "--message", "change"]);
    pooled.expect_code(0);
    assert!(record_name(&world, "pooled").starts_with("ganger-pool-"));
    assert!(
        pooled
            .stdout
            .contains("on agent/pooled from main, ready from the pool"),
        "{}",
        pooled.stdout
    );
    let tree =
        |slug: &str| world.git(&["rev-parse", &format!("refs/ganger/{slug}/round-1^{{tree}}")]);
    assert_eq!(tree("pooled"), tree("plain"));
    let diff = |slug: &str| {
        let run = world.ganger(&["diff", slug]);
        run.expect_code(0);
        run.stdout.replace(slug, "SLUG")
    };
    let pooled = diff("pooled");
    assert!(
        pooled.contains("moved.txt") && pooled.contains("new mode"),
        "{pooled}"
    );
    assert_eq!(pooled, diff("plain"));
    let base = world.git(&["rev-parse", "HEAD"]);
    wait_refilled(&world, vec![(base, 1)]);
    world.ganger(&["merge", "pooled"]).expect_code(0);
    assert_eq!(world.git(&["rev-parse", "main^{tree}"]), tree("pooled"));
}

#[test]
fn a_pool_of_another_base_is_not_taken_and_is_replaced() {
    let world = pool_world(1);
    world.ganger(&["trees", "fill"]).expect_code(0);
    let old = world.git(&["rev-parse", "HEAD"]);
    world.write("later.txt", "later\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "later"]);
    let new = world.git(&["rev-parse", "HEAD"]);
    world
        .ganger(&["start", "moved", "--message", "change"])
        .expect_code(0);
    assert!(!record_name(&world, "moved").starts_with("ganger-pool-"));
    assert!(world.worktree("moved").join("later.txt").exists());
    assert_ne!(old, new);
    wait_refilled(&world, vec![(new, 1)]);
    let drained = world.ganger(&["trees", "drain", "--json"]);
    drained.expect_code(0);
    assert_eq!(drained.json()["removed"], 1);
    assert!(ready(&world).is_empty());
    assert!(!world.git(&["worktree", "list"]).contains("ganger-pool-"));
    // Pooled worktrees removed by hand (with `.ganger/trees`) leave locked records, which the
    // next fill or drain drops.
    world.ganger(&["trees", "fill"]).expect_code(0);
    std::fs::remove_dir_all(world.repo.join(".ganger/trees")).unwrap();
    assert!(world.git(&["worktree", "list"]).contains("ganger-pool-"));
    world.ganger(&["trees", "drain"]).expect_code(0);
    assert!(!world.git(&["worktree", "list"]).contains("ganger-pool-"));
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test kills a start mid-way, as a user's ^C or a crash would"
)]
fn a_start_killed_after_taking_a_pooled_worktree_leaves_nothing_once_settled() {
    let world = pool_world(1);
    world.ganger(&["trees", "fill"]).expect_code(0);
    let mut start = world.command(&["start", "killed", "--message", "change"]);
    start
        .env("GANGER_FAULT_PAUSE", "pool-taken:60000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut start = start.spawn().unwrap();
    let taken = wait_until(Duration::from_secs(20), || {
        world.worktree("killed").exists()
    });
    start.kill().unwrap();
    start.wait().unwrap();
    assert!(taken, "the start took no pooled worktree");
    let clean = world.ganger(&["clean"]);
    clean.expect_code(0);
    assert!(!world.worktree("killed").exists(), "{}", clean.stdout);
    assert!(!world.git(&["worktree", "list"]).contains("killed"));
    // The slug starts again, from the pool's next tree or a checkout.
    world
        .ganger(&["start", "killed", "--message", "change"])
        .expect_code(0);
    let head = world.git(&["rev-parse", "HEAD"]);
    wait_refilled(&world, vec![(head, 1)]);
}

#[test]
fn a_trees_setting_that_cannot_be_is_refused_and_nothing_is_made() {
    let world = pool_world(0);
    for (value, says) in [
        ("-1", "pool"),
        ("\"two\"", "pool"),
        ("33", "more than the 32"),
    ] {
        world.use_command_agent(AGENT, "", &format!("\n[trees]\npool = {value}\n"));
        for args in [
            &["start", "bad", "--message", "x"][..],
            &["trees", "fill"][..],
        ] {
            let run = world.ganger(args);
            run.expect_code(2);
            assert!(run.stderr.contains(says), "{value}: {}", run.stderr);
            assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        }
        assert!(!world.worktree("bad").exists());
        assert!(!world.repo.join(".ganger/trees").exists());
    }
}
