//! The lander inside `ganger serve` and `ganger worker` (issue 41), and `land = true` in a
//! fleet file: a task so marked is queued to land once its last round passes its checks, and
//! the daemon's lander lands it; a task not marked stays where it is. Real git, the real
//! daemons and the `command` agent, whose prompt is a shell script.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::land_world::command_world;
use ganger_test_support::{World, wait_until};
use std::process::Stdio;
use std::time::Duration;

fn world() -> World {
    command_world(
        "eval \"$(cat)\"",
        "\n[[checks]]\nname = \"tests\"\ncommand = \"test ! -e broken\"\n",
    )
}

/// Whether `main` has the file `path`.
fn main_has(world: &World, path: &str) -> bool {
    let mut git = std::process::Command::new("git");
    git.args(["cat-file", "-e", &format!("main:{path}")])
        .current_dir(&world.repo);
    world.env(&mut git);
    git.stderr(Stdio::null()).status().unwrap().success()
}

fn done(world: &World, slug: &str) -> bool {
    let status = world.ganger(&["status", slug, "--json"]);
    status.code == 0 && status.json()["status"] == "done"
}

/// Runs the fleet below with `daemon` (`serve` or a worker) running: `x` and `broken` have
/// `land = true` (`broken`'s round fails its checks), `y` has not. Returns once x landed.
fn lands_what_the_fleet_file_marks(daemon: &[&str]) {
    let world = world();
    let fleet = world.root().join("fleet.toml");
    std::fs::write(
        &fleet,
        "[[task]]\nslug = \"x\"\nmessage = \"echo x > x.txt\"\nland = true\n\
         [[task]]\nslug = \"y\"\nmessage = \"echo y > y.txt\"\n\
         [[task]]\nslug = \"broken\"\nmessage = \"echo b > broken\"\nland = true\n",
    )
    .unwrap();
    let mut command = world.command(daemon);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the daemon in the background"
    )]
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    world
        .ganger(&["fleet", "submit", fleet.to_str().unwrap()])
        .expect_code(0);
    let landed = wait_until(Duration::from_secs(60), || main_has(&world, "x.txt"));
    let others_ended = wait_until(Duration::from_secs(60), || {
        done(&world, "y")
            && world.ganger(&["status", "broken", "--json"]).json()["round"].as_u64() == Some(1)
    });
    // A second for the lander to have looked at y and broken too.
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(landed, "x was never landed by {daemon:?}");
    assert!(others_ended);
    assert!(!main_has(&world, "y.txt"), "y landed without land = true");
    assert!(
        !main_has(&world, "broken"),
        "a task whose checks failed landed"
    );
    let status = world.ganger(&["land", "status", "--json"]);
    status.expect_code(0);
    let text = status.stdout;
    assert!(!text.contains("\"y\""), "y was queued: {text}");
    assert!(!text.contains("\"broken\""), "broken was queued: {text}");
}

#[test]
fn serve_queues_and_lands_a_fleet_task_marked_land_once_its_round_passes() {
    lands_what_the_fleet_file_marks(&["serve"]);
}

#[test]
fn a_worker_lands_as_serve_does() {
    lands_what_the_fleet_file_marks(&["worker", "--name", "w1"]);
}

#[test]
fn land_true_with_a_land_label_of_another_value_is_refused() {
    let world = world();
    let fleet = world.root().join("fleet.toml");
    std::fs::write(
        &fleet,
        "[[task]]\nslug = \"x\"\nmessage = \"m\"\nland = true\nlabels = { land = \"no\" }\n",
    )
    .unwrap();
    let run = world.ganger(&["fleet", "submit", fleet.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("land = true"), "{}", run.stderr);
}
