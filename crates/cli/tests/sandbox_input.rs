//! Bad sandbox input: an unknown sandbox or network, `--rw` outside the worktree, options
//! that need a sandbox, an unreachable Docker daemon, and ignored files under mounted paths
//! are each refused with one error line and exit 2, before anything is made.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

fn world(extra: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", extra);
    world
}

#[track_caller]
fn refused(world: &World, args: &[&str], needle: &str) {
    let run = world.ganger(args);
    run.expect_code(2);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{args:?}: {}", run.stderr);
    assert!(
        first.contains(needle),
        "{args:?}: {needle:?} not in {first:?}"
    );
    assert!(run.stderr.lines().count() <= 2, "{}", run.stderr);
    let slug = args[1];
    assert!(
        !world.root().join(format!("repo-agent-{slug}")).exists(),
        "{args:?}: a worktree was made"
    );
    assert_eq!(
        world.git(&["branch", "--list", &format!("agent/{slug}")]),
        ""
    );
}

#[test]
fn sandbox_options_are_checked_before_anything_is_made() {
    let world = world("");
    let start = ["start", "s1", "--message", "hi"];
    let with = |more: &[&'static str]| -> Vec<&'static str> {
        let mut args = start.to_vec();
        args.extend_from_slice(more);
        args
    };
    refused(
        &world,
        &with(&["--sandbox", "podman"]),
        "unknown sandbox \"podman\"",
    );
    refused(
        &world,
        &with(&["--network", "bridge"]),
        "unknown network \"bridge\"",
    );
    refused(
        &world,
        &with(&["--network", "none"]),
        "--network none needs a sandbox",
    );
    refused(&world, &with(&["--rw", "out"]), "--rw needs a sandbox");
    for outside in ["../x", "/etc", "a/../../b"] {
        let args = with(&["--sandbox", "bwrap", "--rw", outside]);
        refused(&world, &args, "give a path inside the worktree");
    }
}

#[test]
fn an_unreachable_docker_daemon_is_named() {
    let world = world("");
    let mut command = world.command(&["start", "s1", "--message", "hi", "--sandbox", "docker"]);
    command.env("DOCKER_HOST", "unix:///nonexistent/docker.sock");
    let out = command.output().unwrap();
    // Not bad input: the environment failed (exit 70), with its cause.
    assert_eq!(out.status.code(), Some(70));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("/nonexistent/docker.sock"),
        "{stderr}"
    );
    assert!(!world.root().join("repo-agent-s1").exists());
}

#[test]
fn a_misspelt_sandbox_default_is_named() {
    let world = world("[sandbox]\ndefault = \"bwarp\"\n");
    refused(
        &world,
        &["start", "s1", "--message", "hi"],
        "sandbox.default in ganger.toml: unknown sandbox \"bwarp\"",
    );
}

/// The seed's rule: ignored files under a path the sandbox mounts read-only are refused,
/// named, before the round; ignored build output elsewhere in the worktree is fine.
#[test]
fn ignored_files_under_mounted_paths_are_refused_by_name() {
    let world = world("[sandbox]\nread_only = [\"docs\"]\n");
    world.write(".gitignore", "*.log\n");
    world.write("docs/guide.md", "# guide\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "docs"]);
    world.git(&["worktree", "add", "-q", "-b", "given", "../given"]);
    let given = world.root().join("given");
    std::fs::write(given.join("docs/build.log"), "left by a check\n").unwrap();
    std::fs::write(given.join("out.log"), "build output is fine\n").unwrap();
    let run = world.ganger(&[
        "start",
        "s1",
        "--message",
        "hi",
        "--sandbox",
        "bwrap",
        "--worktree",
        given.to_str().unwrap(),
    ]);
    run.expect_code(2);
    assert!(run.stderr.contains("docs/build.log"), "{}", run.stderr);
    assert!(!run.stderr.contains("out.log"), "{}", run.stderr);
    // No task was recorded.
    world.ganger(&["status", "s1"]).expect_code(2);
}

/// `sandbox.network = "none"` in ganger.toml is for sandboxed tasks: a local task starts, with
/// the host's network, while `--network none` on a local task is refused.
#[test]
fn a_default_of_no_network_leaves_local_tasks_alone() {
    let world = world("[sandbox]\nnetwork = \"none\"\n");
    let run = world.ganger(&["start", "s1", "--message", "hi", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["sandbox"], "local", "{report:#}");
    assert_eq!(report["network"], "shared", "{report:#}");
    refused(
        &world,
        &["start", "s2", "--message", "hi", "--network", "none"],
        "--network none needs a sandbox",
    );
}
