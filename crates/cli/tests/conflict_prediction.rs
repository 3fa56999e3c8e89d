//! Conflicts seen while tasks run (issue 41): at each round's end its snapshot is merged in
//! memory with the other open tasks of its base that change the same paths, and with the
//! base's head. Real git and the `command` agent, whose prompt is a shell script.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;
use serde_json::{Value, json};

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // A later round's prompt tells of the earlier ones first; the script is its last line.
    world.use_command_agent("eval \"$(tail -n 1)\"", "", "");
    let lines: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    world.write("src/a.txt", &lines);
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", "src/a.txt", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "thirty lines"]);
    world
}

fn round(world: &World, verb: &str, slug: &str, script: &str) {
    world
        .ganger(&[verb, slug, "--message", script])
        .expect_code(0);
}

fn conflicts(world: &World) -> Value {
    let status = world.ganger(&["status", "--json"]);
    status.expect_code(0);
    status.json()["conflicts"].clone()
}

/// The journal's entries of `kind`, as (task, detail).
fn journaled(world: &World, kind: &str) -> Vec<(String, Value)> {
    let watch = world.ganger(&["watch", "--json"]);
    watch.expect_code(0);
    watch.json()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .map(|e| {
            (
                e["task"].as_str().unwrap_or("").to_owned(),
                e["detail"].clone(),
            )
        })
        .collect()
}

#[test]
fn two_tasks_editing_the_same_lines_are_reported_at_the_second_rounds_end_once() {
    let world = world();
    round(
        &world,
        "start",
        "t1",
        "sed -i '10,12s/.*/t1 was here/' src/a.txt",
    );
    assert_eq!(
        conflicts(&world),
        Value::Null,
        "one task alone conflicts with nothing"
    );
    round(
        &world,
        "start",
        "t2",
        "sed -i '11s/.*/t2 was here/' src/a.txt",
    );
    let found = conflicts(&world);
    assert_eq!(
        found,
        json!([{ "task": "t1", "other": "t2", "with_base": false,
                 "files": [{ "path": "src/a.txt", "lines": [[10, 18]] }] }]),
        "{found:#}"
    );
    let human = world.ganger(&["status"]);
    assert!(
        human
            .stdout
            .contains("conflict: t1 and t2 conflict in src/a.txt, lines 10-18\n"),
        "{}",
        human.stdout
    );
    // Another round that still conflicts is not journaled again.
    round(&world, "fix", "t2", "sed -i '12s/.*/t2 again/' src/a.txt");
    let entries = journaled(&world, "conflict");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].0, "t2");
    // The base moves under t1 on the same lines: t1's next round sees it.
    let mut text = std::fs::read_to_string(world.repo.join("src/a.txt")).unwrap();
    text = text.replace("line 10\n", "main's line 10\n");
    world.write("src/a.txt", &text);
    world.git(&["commit", "-q", "-am", "main: line 10"]);
    round(&world, "fix", "t1", "echo more >> src/b.txt");
    let found = conflicts(&world);
    assert!(
        found
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["task"] == "t1" && c["other"] == "main" && c["with_base"] == true),
        "{found:#}"
    );
    let human = world.ganger(&["status"]);
    assert!(
        human
            .stdout
            .contains("conflict: t1 conflicts with main in src/a.txt, lines "),
        "{}",
        human.stdout
    );
}

#[test]
fn two_tasks_editing_different_lines_of_one_file_do_not_conflict() {
    let world = world();
    round(
        &world,
        "start",
        "t1",
        "sed -i '2s/.*/t1 was here/' src/a.txt",
    );
    round(
        &world,
        "start",
        "t2",
        "sed -i '25s/.*/t2 was here/' src/a.txt",
    );
    assert_eq!(conflicts(&world), Value::Null);
    assert!(journaled(&world, "conflict").is_empty());
    // They do share the file: the overlap is journaled, the conflict is not.
    assert_eq!(journaled(&world, "overlap").len(), 1);
}

#[test]
fn a_conflict_resolved_in_a_later_round_is_cleared() {
    let world = world();
    round(
        &world,
        "start",
        "t1",
        "sed -i '10s/.*/t1 was here/' src/a.txt",
    );
    round(
        &world,
        "start",
        "t2",
        "sed -i '10s/.*/t2 was here/' src/a.txt",
    );
    assert_eq!(conflicts(&world).as_array().map(Vec::len), Some(1));
    // t2 takes t1's line: both make the same change, which merges.
    round(
        &world,
        "fix",
        "t2",
        "sed -i '10s/.*/t1 was here/' src/a.txt",
    );
    assert_eq!(conflicts(&world), Value::Null);
    let cleared = journaled(&world, "conflict-cleared");
    assert_eq!(cleared.len(), 1, "{cleared:?}");
    assert_eq!(cleared[0].1["tasks"], json!(["t1", "t2"]));
    let human = world.ganger(&["status"]);
    assert!(!human.stdout.contains("conflict:"), "{}", human.stdout);
}
