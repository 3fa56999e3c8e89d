//! The world the merge queue's tests share: a repository whose tasks run the `command` agent
//! with `agent` as its script, `extra` appended to `ganger.toml` (checks, `[land]`,
//! `[fleet]`), and `ganger.toml` itself ignored and committed so, so that the base is clean.

use ganger_test_support::World;

pub fn command_world(agent: &str, extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(agent, "", extra);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "an ignore"]);
    world
}

/// `ganger start SLUG --message SCRIPT`, which must pass.
pub fn start(world: &World, slug: &str, script: &str) {
    world
        .ganger(&["start", slug, "--message", script])
        .expect_code(0);
}

/// How many first-parent commits of `main` have `commit` as a parent: a task landed once is
/// a parent of exactly one.
pub fn times_landed(world: &World, since: &str, commit: &str) -> usize {
    let listed = world.git(&[
        "rev-list",
        "--first-parent",
        "--parents",
        &format!("{since}..main"),
    ]);
    listed
        .lines()
        .filter(|line| line.split(' ').skip(1).any(|p| p == commit))
        .count()
}
