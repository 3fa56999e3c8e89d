//! What a board reads through the engine (`api_feed.rs`, `api_history.rs`), in-process with a
//! `command` agent: a round's lines with the byte offset past each (blank lines counted but
//! not given, a last line without a newline given once the round ended), resumed from any
//! offset with nothing repeated or lost; the task table's columns; a round's prompt and diff;
//! the whole journal after an entry; every round as a point in time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_engine::{Brief, Engine, ErrorKind, StartOptions, StreamLine};
use ganger_test_support::World;

fn world() -> World {
    let world = World::new("ganger-is-not-run-here".as_ref());
    // Blank and white lines between, and a last line with no newline.
    world.use_command_agent(
        "cat >/dev/null; echo one > out.txt; printf 'one\\n\\n   \\ntwo\\nDONE: three'",
        "",
        "",
    );
    world
}

fn texts(lines: &[StreamLine]) -> Vec<(u64, String)> {
    lines
        .iter()
        .map(|l| {
            let text = serde_json::to_value(&l.events[0]).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned();
            (l.offset, text)
        })
        .collect()
}

fn read_from(engine: &Engine, offset: u64) -> (Vec<StreamLine>, u64, bool) {
    let mut feed = engine.round_feed("feed", 1, offset).unwrap();
    let mut lines = Vec::new();
    let read = feed.poll(engine, &mut |line| lines.push(line)).unwrap();
    // A second poll of an ended round gives nothing more.
    feed.poll(engine, &mut |line| panic!("given twice: {line:?}"))
        .unwrap();
    (lines, read.offset, read.running)
}

#[test]
fn a_rounds_lines_resume_from_any_offset_once_each() {
    let world = world();
    let engine = Engine::open(&world.repo, None, "alice").unwrap();
    let options = StartOptions {
        slug: "feed".into(),
        brief: Some(Brief::Message("write it".into())),
        labels: vec!["team=red".into()],
        ..StartOptions::default()
    };
    engine.start(options, false, &mut |_| {}).unwrap();

    let (all, end, running) = read_from(&engine, 0);
    assert!(!running);
    assert_eq!(
        texts(&all),
        [
            (4, "one".to_owned()),
            (13, "two".to_owned()),
            (24, "DONE: three".to_owned())
        ]
    );
    assert_eq!(
        all.iter().map(|l| l.number).collect::<Vec<_>>(),
        [1, 4, 5],
        "numbers count the blank lines"
    );
    assert_eq!(end, 24);
    for (offset, wanted) in [(4, 2), (5, 2), (13, 1), (23, 1), (24, 0)] {
        let (rest, end, _) = read_from(&engine, offset);
        assert_eq!(rest.len(), wanted, "from {offset}");
        assert_eq!(end, 24);
        assert_eq!(texts(&rest), texts(&all)[3 - wanted..], "from {offset}");
    }

    // The table's row, the prompt, the diff between the round's snapshots.
    let rows = engine.board_tasks().unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        (
            row.slug.as_str(),
            row.owner.as_str(),
            row.rounds,
            row.done.as_deref()
        ),
        ("feed", "alice", 1, Some("DONE: three"))
    );
    assert_eq!(row.labels.get("team").map(String::as_str), Some("red"));
    assert_eq!(engine.round_prompt("feed", 1).unwrap(), "write it");
    let diff = String::from_utf8(engine.round_diff("feed", 1, false).unwrap()).unwrap();
    assert!(
        diff.contains("+++ b/out.txt\n@@ -0,0 +1 @@\n+one\n"),
        "{diff}"
    );

    // The journal after an entry, and its last entry.
    let journal = engine.journal_after(0, 100).unwrap();
    let last = engine.last_journal_id().unwrap();
    assert_eq!(journal.last().unwrap().id, last);
    assert_eq!(engine.journal_after(last - 1, 100).unwrap().len(), 1);
    assert!(engine.journal_after(last, 100).unwrap().is_empty());

    // Every round as a point in time.
    let history = engine.round_history().unwrap();
    assert_eq!(history.rounds.len(), 1);
    assert_eq!(history.rounds[0].task, "feed");
    assert!(history.rounds[0].ended_at.unwrap() >= history.rounds[0].started_at);

    // Unknown and impossible names.
    assert!(engine.find_task("nope").unwrap().is_none());
    assert_eq!(
        engine.find_task("../up").unwrap_err().kind,
        ErrorKind::Invalid
    );
    assert_eq!(
        engine.round_feed("feed", 2, 0).unwrap_err().message,
        "task feed has no round 2 (it has 1)"
    );
}
