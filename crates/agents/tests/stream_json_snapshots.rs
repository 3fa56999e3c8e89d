//! Snapshots of what the recorded Claude Code and Qwen Code streams normalize to: every line's
//! type and events, the round summary, and the verdict with the exit code the real run had.
#![cfg(test)]

use crate::stream_json_common;

use ganger_agents::stream_json::{Dialect, StreamJsonParser, verdict};
use ganger_agents::{AgentExit, StreamParser, scan, summarize_stream};
use ganger_events::{Event, RoundSummary};
use serde::Serialize;
use stream_json_common::{fixture_dir, fixtures};

/// How each recorded run ended (docs/agents/claude-measured.md, qwen-measured.md): Claude
/// exits 1 after an API error; Qwen 0.15.10 always exits 0, Qwen 0.24.4 exits 1 after one.
fn recorded_exit(name: &str) -> AgentExit {
    let api_error = name.contains("-error-");
    if api_error && (name.starts_with("claude-") || name.starts_with("qwen-0.24.4-")) {
        AgentExit::Code(1)
    } else {
        AgentExit::Code(0)
    }
}

#[derive(Serialize)]
struct Line {
    kind: Option<String>,
    events: Vec<Event>,
}

#[derive(Serialize)]
struct Normalized {
    lines: Vec<Line>,
    summary: RoundSummary,
    exit: String,
    done: bool,
    reason: Option<String>,
}

fn snapshot_every_stream(dialect: Dialect) {
    for (name, data) in fixtures(fixture_dir(dialect)) {
        let mut parser = StreamJsonParser::new(dialect);
        let lines = scan::lines(&data)
            .map(|line| {
                let parsed = parser.parse_line(line);
                Line {
                    kind: parsed.kind,
                    events: parsed.events,
                }
            })
            .collect();
        let summary = summarize_stream(&mut StreamJsonParser::new(dialect), &data);
        let exit = recorded_exit(&name);
        let verdict = verdict(dialect, &summary, exit);
        let normalized = Normalized {
            lines,
            summary,
            exit: exit.to_string(),
            done: verdict.done,
            reason: verdict.reason,
        };
        insta::assert_json_snapshot!(name, normalized);
    }
}

#[test]
fn recorded_claude_streams_normalize_as_snapshotted() {
    snapshot_every_stream(Dialect::Claude);
}

#[test]
fn recorded_qwen_streams_normalize_as_snapshotted() {
    snapshot_every_stream(Dialect::Qwen);
}
