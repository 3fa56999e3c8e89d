//! A worker that makes a git repository inside its worktree (issue 13.11): the snapshot kept
//! only a gitlink, and `rewind` wrote back an empty directory. Now the snapshot keeps the
//! nested repository's files, `diff` shows them, and `rewind` brings them back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

/// Round "one" makes `sub/` a repository with a committed file; round "two" removes it (the
/// request is the prompt's last line: a command agent without sessions gets the earlier
/// rounds first).
const WORKER: &str = r#"p=$(cat | tail -n 1)
case "$p" in
  *one*) mkdir sub && cd sub && git init -q -b main && echo inner > a.txt \
           && git add a.txt && git -c user.name=w -c user.email=w@w commit -qm inner \
           && echo 'DONE: made sub' ;;
  *two*) rm -rf sub && echo 'DONE: removed sub' ;;
esac"#;

#[test]
fn a_nested_repository_is_snapshotted_as_files_and_rewound() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(WORKER, "", "");
    world
        .ganger(&["start", "n", "--message", "one"])
        .expect_code(0);
    assert_eq!(
        world.git(&["show", "refs/ganger/n/round-1:sub/a.txt"]),
        "inner"
    );
    let diff = world.ganger(&["diff", "n", "--stat"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("sub/a.txt"), "{}", diff.stdout);
    world
        .ganger(&["fix", "n", "--message", "two"])
        .expect_code(0);
    let worktree = world.worktree("n");
    assert!(!worktree.join("sub").exists());
    world.ganger(&["rewind", "n", "--to", "1"]).expect_code(0);
    assert_eq!(
        std::fs::read_to_string(worktree.join("sub/a.txt")).unwrap(),
        "inner\n"
    );
}

#[test]
fn a_nested_repository_without_a_commit_leaves_the_round_done_and_its_files_in_the_diff() {
    // git refuses to add a repository without a commit: the round's snapshot failed, so the
    // round was `failed` whatever the agent did, and `ganger diff` failed.
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; mkdir app && cd app && git init -q && echo code > main.txt && echo 'DONE: scaffolded'",
        "",
        "",
    );
    let run = world.ganger(&["start", "n", "--message", "scaffold", "--json"]);
    run.expect_code(0);
    assert_eq!(run.json()["status"], "done", "{}", run.stdout);
    let diff = world.ganger(&["diff", "n", "--stat"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("app/main.txt"), "{}", diff.stdout);
}
