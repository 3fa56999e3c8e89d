//! What the tests of every adapter share: the recorded streams of one agent, and the check that
//! a parser's `feed` equals folding its `parse_line`, line after line.

use ganger_agents::{Adapter, scan, summarize_stream};
use ganger_events::RoundSummary;
use std::path::PathBuf;

/// The recorded streams in `tests/fixtures/AGENT`, by file name, in name order.
pub fn recorded(agent: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(agent);
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "fixtures missing in {}", dir.display());
    found
}

/// Feeds `data` line by line to one fresh parser of `adapter` through `feed` and to another
/// through `parse_line` folded, asserting after every line that the summaries and progress
/// agree; returns the summary.
pub fn assert_feed_is_fold(adapter: &dyn Adapter, data: &[u8]) -> RoundSummary {
    let mut fed = adapter.stream_parser();
    let mut parsed = adapter.stream_parser();
    let mut by_feed = RoundSummary::default();
    let mut by_fold = RoundSummary::default();
    for line in scan::lines(data) {
        let feed = fed.feed(line, &mut by_feed);
        let line_parse = parsed.parse_line(line);
        line_parse.fold_into(&mut by_fold);
        assert_eq!(
            (feed.progress, &by_feed),
            (line_parse.is_progress(), &by_fold),
            "feed and fold differ on line {:?}",
            String::from_utf8_lossy(line)
        );
    }
    assert_eq!(
        summarize_stream(adapter.stream_parser().as_mut(), data),
        by_feed
    );
    by_feed
}

/// A stream of `lines`, one per line.
pub fn stream_of(lines: &[&str]) -> Vec<u8> {
    lines
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>()
        .into_bytes()
}

/// The summary of `lines` as `adapter` reads them.
pub fn summary_of(adapter: &dyn Adapter, lines: &[&str]) -> RoundSummary {
    summarize_stream(adapter.stream_parser().as_mut(), &stream_of(lines))
}
