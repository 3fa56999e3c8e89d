//! `ganger land --fix` (issue 41): the fix round of a task the lander sent back runs detached,
//! so the lander goes on with the next batches meanwhile, and queues the task again once the
//! round passed. Real git, the real `ganger` and the `command` agent: its fix round resolves
//! the conflict only once the test opens a gate.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::land_world::{command_world, start, times_landed};
use ganger_test_support::{World, wait_until};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;

/// The command agent's script: a fix round of a conflict waits for the file `gate` in the
/// world's root (two levels above the repository's git directory; `gate.waiting` says it
/// waits), then drops the markers.
const GATED_FIXER: &str = "p=$(cat); case \"$p\" in *'conflict markers'*) \
    gate=\"$(dirname \"$(dirname \"$(git rev-parse --path-format=absolute --git-common-dir)\")\")/gate\"; \
    touch \"$gate.waiting\"; while [ ! -e \"$gate\" ]; do sleep 0.1; done; \
    for f in $(git diff --name-only --diff-filter=U); do \
    sed -i '/^<<<<<<< /d;/^=======$/d;/^>>>>>>> /d' \"$f\"; done;; \
    *) eval \"$(printf '%s\\n' \"$p\" | tail -n 1)\";; esac";

fn world() -> World {
    command_world(
        GATED_FIXER,
        "\n[[checks]]\nname = \"tests\"\ncommand = \"true\"\n",
    )
}

fn status(world: &World, slug: &str) -> Value {
    let run = world.ganger(&["status", slug, "--json"]);
    run.expect_code(0);
    run.json()
}

fn landed(batch: &Value) -> Vec<String> {
    batch["landed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_lander_lands_other_tasks_while_a_fix_round_runs_and_then_the_fixed_task() {
    let world = world();
    start(&world, "g1", "echo g1 > g1.txt");
    // x changes the README that main changes too: it conflicts with the base.
    start(&world, "x", "echo 'x was here' >> README.md");
    world.write("README.md", "# test repository\nmain's own line\n");
    world.git(&["commit", "-q", "-am", "main: a line"]);
    world.ganger(&["land", "g1"]).expect_code(0);
    world.ganger(&["land", "x", "--fix"]).expect_code(0);
    let out = world.root().join("land-run.json");
    let mut command = world.command(&["land", "--run", "--json"]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the lander runs in the background while the test queues more"
    )]
    let mut lander = command
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || {
            let x = status(&world, "x");
            x["round"] == 2 && x["status"] == "running"
        }),
        "x's fix round never started"
    );
    // While x's fix round waits at its gate, g2 is queued and lands.
    start(&world, "g2", "echo g2 > g2.txt");
    world.ganger(&["land", "g2"]).expect_code(0);
    let g2_landed = wait_until(Duration::from_secs(60), || {
        world
            .git(&["ls-tree", "--name-only", "main"])
            .contains("g2.txt")
    });
    let x_still_running = status(&world, "x")["status"] == "running";
    std::fs::write(world.root().join("gate"), "").unwrap();
    let ended = wait_until(Duration::from_secs(90), || {
        lander.try_wait().unwrap().is_some()
    });
    assert!(ended, "the lander did not end");
    assert!(g2_landed, "g2 did not land while x's fix round ran");
    assert!(x_still_running, "x's fix round ended before g2 landed");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let batches = report["batches"].as_array().unwrap();
    let each: Vec<Vec<String>> = batches.iter().map(landed).collect();
    assert_eq!(each, [vec!["g1"], vec!["g2"], vec!["x"]], "{report:#}");
    assert_eq!(
        batches[0]["fix_rounds"],
        json!([{ "task": "x", "round": 2, "passed": true, "requeued": true }])
    );
    let readme = std::fs::read_to_string(world.repo.join("README.md")).unwrap();
    assert!(
        readme.contains("main's own line") && readme.contains("x was here"),
        "{readme}"
    );
}

/// A lander killed (`kill -9`) while the fix round it sent runs leaves the round running on
/// its own; the next lander follows it up: once the round passed, the task is queued again
/// and lands, exactly once, and a third lander finds nothing to do.
#[test]
fn a_fix_round_of_a_killed_lander_is_followed_up_by_the_next_and_lands_once() {
    let world = world();
    start(&world, "x", "echo 'x was here' >> README.md");
    world.write("README.md", "# test repository\nmain's own line\n");
    world.git(&["commit", "-q", "-am", "main: a line"]);
    let head = world.git(&["rev-parse", "main"]);
    world.ganger(&["land", "x", "--fix"]).expect_code(0);
    let mut command = world.command(&["land", "--run"]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test kills the lander while its fix round runs"
    )]
    let mut lander = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the round's agent runs in its own host (before, the round is the
    // lander's, and dies with it).
    assert!(
        wait_until(Duration::from_secs(60), || world
            .root()
            .join("gate.waiting")
            .exists()),
        "x's fix round never started"
    );
    let killed = std::process::Command::new("kill")
        .args(["-9", &lander.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = lander.wait();
    // The round goes on without its lander, and passes.
    std::fs::write(world.root().join("gate"), "").unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || status(&world, "x")["status"]
            != "running"),
        "x's fix round did not end"
    );
    assert_eq!(
        status(&world, "x")["status"],
        "done",
        "{:#}",
        status(&world, "x")
    );
    let run = world.ganger(&["land", "--run", "--json"]);
    run.expect_code(0);
    let report = run.json();
    let each: Vec<Vec<String>> = report["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(landed)
        .collect();
    assert_eq!(each, [vec!["x"]], "{report:#}\n{}", run.stderr);
    assert!(
        run.stderr
            .contains("x's fix round 2 was sent by a lander that is gone"),
        "{}",
        run.stderr
    );
    let tip = world.git(&["rev-parse", "agent/x"]);
    assert_eq!(times_landed(&world, &head, &tip), 1);
    let readme = std::fs::read_to_string(world.repo.join("README.md")).unwrap();
    assert!(readme.contains("x was here"), "{readme}");
    // Followed up once: nothing is left for another lander.
    let again = world.ganger(&["land", "--run", "--json"]);
    again.expect_code(0);
    assert_eq!(again.json()["batches"], json!([]), "{}", again.stderr);
    assert_eq!(times_landed(&world, &head, &tip), 1);
}
