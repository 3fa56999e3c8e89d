//! Bad input to the pipeline's commands: one clear error line, exit 2, and nothing made (no
//! state, no worktree, no branch). None of these needs a model: the stand-in agent does for
//! the one task that must exist.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

/// Runs `args`, which must be refused: exit 2, one `error:` line holding `needle`, nothing
/// on stdout.
#[track_caller]
pub(crate) fn refused(world: &World, args: &[&str], needle: &str) {
    let run = world.ganger(args);
    run.expect_code(2);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("error: "), "{args:?}: {}", run.stderr);
    assert!(
        first.contains(needle),
        "{args:?}: expected {needle:?} in {first:?}"
    );
    assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
}

fn nothing_made(world: &World) {
    assert!(!world.repo.join(".ganger").exists(), "state was made");
    assert_eq!(world.git(&["branch", "--list", "agent/*"]), "");
    assert!(!world.worktree("p").exists(), "a worktree was made");
}

#[test]
fn bad_pipeline_commands_are_refused_before_anything_is_made() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    refused(&world, &["plan", "Bad", "--message", "x"], "invalid slug");
    refused(
        &world,
        &["plan", "p.planner", "--message", "x"],
        "invalid slug",
    );
    refused(&world, &["plan", "p"], "required");
    refused(&world, &["approve", "nope"], "no task nope");
    refused(
        &world,
        &["reject", "nope", "--message", "x"],
        "no task nope",
    );
    refused(&world, &["reject", "nope"], "required");
    refused(&world, &["status", "nope.planner"], "no task nope.planner");
    nothing_made(&world);
}

#[test]
fn roles_that_cannot_run_are_refused_before_anything_is_made() {
    for (extra, needle) in [
        (
            "[roles.planner]\nprompt = \"roles/missing.md\"\n",
            "roles.planner.prompt: cannot read",
        ),
        (
            "[roles.critic]\nagent = \"claude\"\neffort = \"high\"\n",
            "roles.critic.effort",
        ),
        (
            "[roles.code]\nagent = \"nobody\"\n",
            "unknown agent \"nobody\"",
        ),
        (
            "[roles.planner]\npermission = \"all\"\n",
            "roles.planner.permission",
        ),
        (
            "[pipeline]\nreviewers = [\"nobody\"]\n",
            "pipeline.reviewers",
        ),
    ] {
        let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
        world.use_fake_agent("", extra);
        refused(&world, &["plan", "p", "--message", "x"], needle);
        nothing_made(&world);
    }
}

#[test]
fn a_task_without_a_pipeline_cannot_be_approved_or_rejected() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_fake_agent("", "");
    world
        .ganger(&["start", "t", "--message", "hello"])
        .expect_code(0);
    refused(&world, &["approve", "t"], "task t has no pipeline");
    refused(
        &world,
        &["reject", "t", "--message", "x"],
        "task t has no pipeline",
    );
    // Its status is still its last round's report.
    let status = world.ganger(&["status", "t", "--json"]).json();
    assert_eq!(status["schema"], "ganger.round-report/1");
}
