//! Many commands at once on one repository, as a fleet or an impatient user runs them: starts
//! into a repository with no state yet (they race to create the database) and starts that add
//! worktrees at the same moment (git reads every worktree's entry while it adds one) all
//! succeed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

#[test]
fn starts_at_once_into_a_new_repository_all_succeed() {
    // Forty reproduced git's failure ("failed to read .git/worktrees/X/commondir") in a
    // third of the starts before worktree creation was serialized.
    const STARTS: usize = 40;
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    assert!(!world.repo.join(".ganger").exists());
    let runs: Vec<_> = std::thread::scope(|scope| {
        let world = &world;
        let handles: Vec<_> = (0..STARTS)
            .map(|n| {
                scope.spawn(move || {
                    world.ganger(&["start", &format!("t{n}"), "--message", "hello", "--json"])
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (n, run) in runs.iter().enumerate() {
        assert_eq!(run.code, 0, "start t{n}:\n{}\n{}", run.stderr, run.stdout);
        assert_eq!(run.json()["status"], "done", "t{n}: {}", run.stdout);
    }
    assert_eq!(world.worktree_count(), STARTS + 1, "{}", world.worktrees());
}
