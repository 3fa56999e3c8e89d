//! The full parse of Gemini CLI lines: the answer's pieces joined, tool results under the
//! name their call announced, warnings and errors told apart.
#![cfg(test)]

use crate::common;

use common::recorded::{assert_feed_is_fold, stream_of, summary_of};
use ganger_agents::StreamParser;
use ganger_agents::adapter;
use ganger_agents::gemini::GeminiStream;
use ganger_events::{Event, ToolStatus};

fn piece(text: &str) -> String {
    format!(
        r#"{{"type":"message","role":"assistant","content":{},"delta":true}}"#,
        serde_json::to_string(text).unwrap()
    )
}

#[test]
fn consecutive_pieces_make_one_whole_answer() {
    let (a, b, c) = (piece("Done "), piece("round "), piece("1.\n"));
    let tool = r#"{"type":"tool_use","tool_name":"read_file","tool_id":"read_file__1","parameters":{"absolute_path":"/w/a"}}"#;
    let mut parser = GeminiStream::default();
    let texts: Vec<Event> = [a.as_str(), b.as_str(), c.as_str()]
        .iter()
        .flat_map(|line| parser.parse_line(line.as_bytes()).events)
        .collect();
    assert_eq!(
        texts.last(),
        Some(&Event::Text {
            text: "Done round 1.\n".into()
        })
    );
    // A tool call in between ends the answer: the next piece starts a new one.
    let gemini = adapter("gemini").unwrap();
    let summary = summary_of(gemini, &[&a, &b, tool, &piece("Second.")]);
    assert_eq!(summary.answer.as_deref(), Some("Second."));
    let summary = summary_of(gemini, &[&a, &b, &c]);
    assert_eq!(summary.answer.as_deref(), Some("Done round 1.\n"));
    assert_feed_is_fold(gemini, &stream_of(&[&a, &b, tool, &c]));
}

#[test]
fn a_result_is_named_by_its_call_and_unknown_ids_by_their_prefix() {
    let mut parser = GeminiStream::default();
    parser.parse_line(br#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"call_7","parameters":{"command":"false"}}"#);
    let failed = parser.parse_line(br#"{"type":"tool_result","tool_id":"call_7","status":"error","output":"Command exited with code 1","error":{"type":"shell_error","message":"exit 1"}}"#);
    assert_eq!(
        failed.events,
        [Event::Tool {
            name: "run_shell_command".into(),
            status: ToolStatus::Error,
            title: Some("false".into()),
            error: Some("exit 1".into()),
        }]
    );
    let orphan = parser.parse_line(
        br#"{"type":"tool_result","tool_id":"replace__replace_17_0","status":"success"}"#,
    );
    assert_eq!(
        orphan.events,
        [Event::Tool {
            name: "replace".into(),
            status: ToolStatus::Completed,
            title: None,
            error: None,
        }]
    );
}

#[test]
fn warnings_count_only_and_errors_are_errors() {
    let mut parser = GeminiStream::default();
    let warning = parser.parse_line(
        br#"{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}"#,
    );
    assert_eq!(warning.kind.as_deref(), Some("error"));
    assert!(warning.events.is_empty());
    let error = parser.parse_line(
        br#"{"type":"error","severity":"error","message":"Maximum session turns exceeded"}"#,
    );
    assert!(
        matches!(&error.events[..], [Event::Error { message, .. }] if message == "Maximum session turns exceeded")
    );
    let odd = parser.parse_line(br#"{"type":"novel","x":1}"#);
    assert_eq!(
        odd.events,
        [Event::Unknown {
            kind: "novel".into()
        }]
    );
    assert_eq!(parser.parse_line(b"not json").kind, None);
}
