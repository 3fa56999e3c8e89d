//! The `StreamParser` contract for the Claude Code and Qwen Code reader: `feed` equals folding
//! the full parse on every recorded stream, the whole-stream summaries agree, and a fresh
//! parser per round gives the same summary as a live one.
#![cfg(test)]

use crate::stream_json_common;

use ganger_agents::stream_json::{Dialect, StreamJsonParser};
use ganger_agents::{summarize_reader, summarize_stream};
use stream_json_common::{assert_feed_is_the_fold, fixture_dir, fixtures};

#[test]
fn feed_is_the_fold_of_the_full_parse_on_every_recorded_stream() {
    for dialect in [Dialect::Claude, Dialect::Qwen] {
        for (name, data) in fixtures(fixture_dir(dialect)) {
            let summary = assert_feed_is_the_fold(dialect, &data);
            assert_eq!(
                summarize_stream(&mut StreamJsonParser::new(dialect), &data),
                summary,
                "{name}"
            );
            assert_eq!(
                summarize_reader(&mut StreamJsonParser::new(dialect), data.as_slice()).unwrap(),
                summary,
                "{name}"
            );
            assert!(summary.lines > 0 && summary.malformed == 0, "{name}");
        }
    }
}

#[test]
fn feed_is_the_fold_on_damaged_and_cut_streams() {
    for dialect in [Dialect::Claude, Dialect::Qwen] {
        for (_, data) in fixtures(fixture_dir(dialect)) {
            // Cut anywhere: a half line is malformed, never a panic or a different fold.
            for cut in (0..data.len()).step_by(97) {
                assert_feed_is_the_fold(dialect, &data[..cut]);
            }
            // Lines out of order: results before their calls, calls never answered.
            let mut reversed: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
            reversed.reverse();
            assert_feed_is_the_fold(dialect, &reversed.join(&b'\n'));
        }
    }
}
