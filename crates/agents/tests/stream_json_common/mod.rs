//! What the Claude Code and Qwen Code tests share: their recorded streams, and the check that a
//! parser's `feed` equals folding its full parse, line by line.
#![cfg(test)]
#![allow(
    dead_code,
    reason = "each test module uses its own part of this module"
)]

use ganger_agents::stream_json::{Dialect, StreamJsonParser};
use ganger_agents::{Feed, StreamParser, scan};
use ganger_events::RoundSummary;
use std::path::PathBuf;

/// The recorded streams of one CLI (`tests/fixtures/<dir>/*.jsonl`), by file name, in name
/// order.
pub fn fixtures(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
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
    assert!(found.len() >= 4, "fixtures missing in {}", dir.display());
    found
}

/// The fixture directory of a dialect.
pub fn fixture_dir(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Claude => "claude",
        Dialect::Qwen => "qwen",
    }
}

/// Feeds a whole stream through `feed` in one parser and through `parse_line` + `fold_into` in
/// another, in lockstep, asserting after every line that both agree; returns the summary.
pub fn assert_feed_is_the_fold(dialect: Dialect, data: &[u8]) -> RoundSummary {
    let mut fed = StreamJsonParser::new(dialect);
    let mut parsed = StreamJsonParser::new(dialect);
    let mut by_feed = RoundSummary::default();
    let mut by_fold = RoundSummary::default();
    for (number, line) in scan::lines(data).enumerate() {
        let feed = fed.feed(line, &mut by_feed);
        let line_parsed = parsed.parse_line(line);
        line_parsed.fold_into(&mut by_fold);
        let fold = Feed {
            progress: line_parsed.is_progress(),
        };
        assert_eq!(
            (feed, &by_feed),
            (fold, &by_fold),
            "feed and fold differ on line {number}: {:?}",
            String::from_utf8_lossy(line)
        );
    }
    by_feed
}

/// The summary of a stream given as lines.
pub fn summarize_lines(dialect: Dialect, lines: &[&str]) -> RoundSummary {
    let stream = lines
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>();
    ganger_agents::summarize_stream(&mut StreamJsonParser::new(dialect), stream.as_bytes())
}
