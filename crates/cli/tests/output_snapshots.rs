//! Whole outputs of the main reports, human and JSON, as snapshots (`insta`): a round's
//! report, the task table, a clean, a merge, a journal page and an error. What changes from
//! run to run (paths, times, durations, ids, hashes, pids) is filtered to a placeholder, so a
//! snapshot fails on any other change to what a person or a program reads. Review a change
//! with `INSTA_UPDATE=always cargo nextest run -p ganger-cli --test all output_snapshots` and
//! `git diff crates/cli/tests/snapshots/`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{Run, World};

fn world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.use_command_agent(
        "cat >/dev/null; echo 'line one' > notes.txt; echo 'Wrote notes.txt.'; echo 'DONE: notes written'",
        "",
        "",
    );
    world
}

/// The placeholders for what differs between runs.
fn filters(world: &World) -> Vec<(String, String)> {
    let root = world.root().to_string_lossy().into_owned();
    vec![
        (regex_escape(&root), "[ROOT]".into()),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)".into(),
            "[TIME]".into(),
        ),
        (r"\b[0-9a-f]{40}\b".into(), "[COMMIT]".into()),
        (r"\b[0-9a-f]{12}\b".into(), "[SHORT]".into()),
        (r"r[0-9a-f]{10,}-[0-9a-f]+-\d+".into(), "[TOKEN]".into()),
        (
            r#""(duration_ms|quiet_ms|seconds)": \d+(\.\d+)?"#.into(),
            r#""$1": [N]"#.into(),
        ),
        (r"\(\d+\.\d s\)".into(), "([S] s)".into()),
        (r"in \d+\.\d s".into(), "in [S] s".into()),
        (
            r#""(pid|host_pid|agent_pid|id|cursor|entry)": \d+"#.into(),
            r#""$1": [N]"#.into(),
        ),
        (r"pid \d+".into(), "pid [N]".into()),
    ]
}

/// `text` with every filter applied, in order.
fn filtered(world: &World, text: &str) -> String {
    let mut out = text.to_owned();
    for (pattern, replacement) in filters(world) {
        let re = regex::Regex::new(&pattern).unwrap();
        out = re.replace_all(&out, replacement.as_str()).into_owned();
    }
    out
}

fn regex_escape(text: &str) -> String {
    regex::escape(text)
}

fn out(world: &World, run: &Run) -> String {
    filtered(
        world,
        &format!("exit {}\n{}{}", run.code, run.stdout, run.stderr),
    )
}

#[test]
fn a_round_report_and_the_task_table() {
    let world = world();
    let start = world.ganger(&["start", "notes", "--message", "write notes.txt"]);
    insta::assert_snapshot!("start_human", out(&world, &start));
    let json = world.ganger(&["status", "notes", "--json"]);
    insta::assert_snapshot!("status_notes_json", out(&world, &json));
    let table = world.ganger(&["status"]);
    insta::assert_snapshot!("status_table", out(&world, &table));
    let table_json = world.ganger(&["status", "--json"]);
    insta::assert_snapshot!("status_table_json", out(&world, &table_json));
}

#[test]
fn a_merge_a_clean_and_the_journal() {
    let world = world();
    world
        .ganger(&["start", "m", "--message", "write notes.txt"])
        .expect_code(0);
    let merge = world.ganger(&["merge", "m"]);
    insta::assert_snapshot!("merge_human", out(&world, &merge));
    let clean = world.ganger(&["clean", "--json"]);
    insta::assert_snapshot!("clean_json", out(&world, &clean));
    let journal = world.ganger(&["watch"]);
    insta::assert_snapshot!("watch_human", out(&world, &journal));
}

#[test]
fn errors_for_a_person_and_for_a_program() {
    let world = world();
    let human = world.ganger(&["fix", "nope", "--message", "x"]);
    insta::assert_snapshot!("error_human", out(&world, &human));
    let json = world.ganger(&["fix", "nope", "--message", "x", "--json"]);
    insta::assert_snapshot!("error_json", out(&world, &json));
}
