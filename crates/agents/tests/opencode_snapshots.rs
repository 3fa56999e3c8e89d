//! Snapshots of what the recorded OpenCode streams normalize to: every line's type and events,
//! the round summary, and the verdict with the exit code the real run had.

use crate::common;

use ganger_agents::opencode::{OpenCodeStream, summarize_bytes, verdict};
use ganger_agents::{AgentExit, StreamParser, scan};
use ganger_events::{Event, RoundSummary};
use serde::Serialize;

/// How each recorded run ended (FACTS.md, section 1).
fn recorded_exit(name: &str) -> AgentExit {
    if name.starts_with("opencode-error-") {
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
    for (name, data) in common::fixtures() {
        let lines = scan::lines(&data)
            .map(|line| {
                let parsed = OpenCodeStream.parse_line(line);
                Line {
                    kind: parsed.kind,
                    events: parsed.events,
                }
            })
            .collect();
        let summary = summarize_bytes(&data);
        let exit = recorded_exit(&name);
        let verdict = verdict(&summary, exit);
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
