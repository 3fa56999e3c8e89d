//! Snapshots of what the recorded Codex streams normalize to: every line's type and events,
//! the round summary, and the verdict with the exit the real run had. Each stream is also
//! held to the `feed == fold(parse_line)` contract.
#![cfg(test)]

use crate::common;

use common::recorded::{assert_feed_is_fold, recorded};
use ganger_agents::{AgentExit, scan};
use ganger_events::{Event, RoundSummary};
use serde::Serialize;

/// How each recorded run ended (FACTS.md, section 3): the connection-refused run never ended
/// and was stopped by `timeout` (SIGTERM); the other error runs exited 1.
fn recorded_exit(name: &str) -> AgentExit {
    if name.ends_with("-hangs") {
        AgentExit::Signal(15)
    } else if name.starts_with("codex-error-") {
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

#[test]
fn recorded_streams_normalize_as_snapshotted() {
    let adapter = ganger_agents::adapter("codex").unwrap();
    for (name, data) in recorded("codex") {
        let mut parser = adapter.stream_parser();
        let lines = scan::lines(&data)
            .map(|line| {
                let parsed = parser.parse_line(line);
                Line {
                    kind: parsed.kind,
                    events: parsed.events,
                }
            })
            .collect();
        let summary = assert_feed_is_fold(adapter, &data);
        let exit = recorded_exit(&name);
        let verdict = adapter.verdict(&summary, exit);
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
