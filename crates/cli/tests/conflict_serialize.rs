//! `[fleet] conflicts = "serialize"` (issue 41): the scheduler holds a queued round of a task
//! whose work is predicted to conflict with another task that is queued to land, until that
//! one has landed; `"warn"` (the default) only reports. Real git, the real `ganger serve`
//! (which lands the queue too) and the `command` agent, whose prompt's last line is a shell
//! script.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, wait_until};
use std::process::Stdio;
use std::time::Duration;

/// A check that passes at once in a task's worktree, and in the lander's scratch worktree
/// (`.ganger/land/...`) only once the file `open` exists in the world's root: a landing the
/// test holds open for as long as it likes.
fn gated_check(world: &World) -> String {
    let open = world.root().join("open");
    let script = format!(
        "case \"$PWD\" in */.ganger/land/*) while [ ! -e {} ]; do sleep 0.1; done;; esac",
        open.display()
    );
    format!(
        "\n[[checks]]\nname = \"gate\"\ncommand = {}\n",
        serde_json::to_string(&script).unwrap()
    )
}

fn world(policy: &str) -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let check = gated_check(&world);
    world.use_command_agent(
        "eval \"$(tail -n 1)\"",
        "",
        &format!("{check}\n[fleet]\nconflicts = \"{policy}\"\n"),
    );
    let lines: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    world.write("src/a.txt", &lines);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", "src/a.txt", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "thirty lines"]);
    // a and b change the same lines: their pair is predicted at b's round's end.
    for (slug, script) in [
        ("a", "sed -i '10,12s/.*/a was here/' src/a.txt"),
        ("b", "sed -i '11s/.*/b was here/' src/a.txt"),
    ] {
        world
            .ganger(&["start", slug, "--message", script])
            .expect_code(0);
    }
    let status = world.ganger(&["status", "--json"]);
    assert_eq!(
        status.json()["conflicts"][0]["other"],
        "b",
        "{}",
        status.stdout
    );
    world
}

fn rounds(world: &World, slug: &str) -> u64 {
    let status = world.ganger(&["status", slug, "--json"]);
    status.expect_code(0);
    status.json()["round"].as_u64().unwrap_or(0)
}

/// The journal's entry numbers of `kind` on `slug`.
fn entries(world: &World, kind: &str, slug: &str) -> Vec<i64> {
    let watch = world.ganger(&["watch", "--json"]);
    watch.expect_code(0);
    watch.json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind && e["task"] == slug)
        .map(|e| e["id"].as_i64().unwrap())
        .collect()
}

/// With `ganger serve` running (and landing; its output in `serve.out` in the world's root),
/// queues b to land (its landing held open by the gated check) and a fix of a; whether a's
/// fix had run after `wait`, while b was still landing (`during` is called then). Then lets
/// b land, and waits for a's fix.
fn fix_of_a_while_b_is_landing(world: &World, wait: Duration, during: impl FnOnce()) -> bool {
    let mut serve = world.command(&["serve"]);
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the daemon in the background"
    )]
    let mut serve = serve
        .stdout(std::fs::File::create(world.root().join("serve.out")).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    world.ganger(&["land", "b"]).expect_code(0);
    world
        .ganger(&["fix", "a", "--message", "echo more > src/b.txt", "--queue"])
        .expect_code(0);
    let ran_early = wait_until(wait, || rounds(world, "a") == 2);
    during();
    assert!(
        entries(world, "landed", "b").is_empty(),
        "b landed before its gate opened"
    );
    std::fs::write(world.root().join("open"), "").unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || {
            rounds(world, "a") == 2 && entries(world, "round-finished", "a").len() == 2
        }),
        "a's fix never ran"
    );
    assert!(
        wait_until(Duration::from_secs(60), || entries(world, "landed", "b")
            .len()
            == 1),
        "serve's lander never landed b"
    );
    serve.kill().unwrap();
    serve.wait().unwrap();
    ran_early
}

#[test]
fn serialize_holds_a_conflicting_tasks_queued_round_until_the_other_has_landed() {
    let world = world("serialize");
    let mut held = serde_json::Value::Null;
    let ran_early = fix_of_a_while_b_is_landing(&world, Duration::from_secs(4), || {
        let status = world.ganger(&["fleet", "status", "--json"]);
        status.expect_code(0);
        held = status.json();
    });
    assert!(
        !ran_early,
        "a's fix ran while b, which it conflicts with, was queued to land"
    );
    // a's second round ended only after b landed (it began after: it was held till then).
    let landed = entries(&world, "landed", "b");
    let finished = entries(&world, "round-finished", "a");
    assert_eq!(
        (landed.len(), finished.len()),
        (1, 2),
        "{landed:?} {finished:?}"
    );
    assert!(
        finished[1] > landed[0],
        "a: {finished:?}, b landed: {landed:?}"
    );
    // While it was held, `fleet status` said why, and so did serve's output, with its
    // lander's steps.
    let a = held["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["slug"] == "a")
        .unwrap();
    assert_eq!(a["queue"], "queued", "{held:#}");
    assert!(
        a["waits"]
            .as_str()
            .is_some_and(|w| w.starts_with("waits for b (landing): ")),
        "{held:#}"
    );
    let out = std::fs::read_to_string(world.root().join("serve.out")).unwrap();
    assert!(out.contains("held a: waits for b (landing): "), "{out}");
    assert!(out.contains("land main: batch 1 on "), "{out}");
    assert!(
        out.contains("land main: batch 1 landed on main: b"),
        "{out}"
    );
}

#[test]
fn warn_only_reports_and_holds_nothing() {
    let world = world("warn");
    let ran_early = fix_of_a_while_b_is_landing(&world, Duration::from_secs(30), || {});
    assert!(ran_early, "a's fix was held under \"warn\"");
}
