//! The full parse of single stream-json lines: each kind of line, the error shapes of both
//! CLIs, and lines of an unexpected shape.
#![cfg(test)]

use ganger_agents::stream_json::{Dialect, StreamJsonParser};
use ganger_agents::{ParsedLine, StreamParser};
use ganger_events::{Event, ToolStatus};

fn parse(dialect: Dialect, lines: &[&str]) -> Vec<ParsedLine> {
    let mut parser = StreamJsonParser::new(dialect);
    lines
        .iter()
        .map(|line| parser.parse_line(line.as_bytes()))
        .collect()
}

fn one(dialect: Dialect, line: &str) -> ParsedLine {
    parse(dialect, &[line]).remove(0)
}

#[test]
fn malformed_lines_and_unknown_types() {
    for line in ["", "not json", "[1]", r#"{"type":1}"#, r#"{"kind":"x"}"#] {
        assert_eq!(one(Dialect::Claude, line).kind, None, "{line}");
    }
    let unknown = one(Dialect::Claude, r#"{"type":"rate_limit_event","x":1}"#);
    assert_eq!(
        unknown.events,
        [Event::Unknown {
            kind: "rate_limit_event".into()
        }]
    );
    // An assistant line without a message is counted as its type but cannot fake progress.
    let bare = one(Dialect::Claude, r#"{"type":"assistant","message":[1]}"#);
    assert_eq!(bare.kind.as_deref(), Some("assistant"));
    assert!(matches!(bare.events[..], [Event::Unknown { .. }]));
    // Partial-message events and other system notices only count.
    for line in [
        r#"{"type":"stream_event","event":{"type":"message_start"}}"#,
        r#"{"type":"system","subtype":"status","status":"requesting","session_id":"s"}"#,
    ] {
        let parsed = one(Dialect::Claude, line);
        assert!(parsed.kind.is_some() && parsed.events.is_empty(), "{line}");
        assert!(parsed.is_progress());
    }
}

#[test]
fn retries_are_not_progress_and_say_what_failed() {
    let retry = one(
        Dialect::Claude,
        r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"error_status":401,"error":"authentication_failed"}"#,
    );
    assert_eq!(
        retry.events,
        [Event::Retry {
            message: "API request failed (HTTP 401, authentication_failed); retry 1 of 2".into()
        }]
    );
    assert!(!retry.is_progress());
    let refused = one(
        Dialect::Claude,
        r#"{"type":"system","subtype":"api_retry","attempt":1,"error_status":null,"error":"unknown"}"#,
    );
    assert_eq!(
        refused.events,
        [Event::Retry {
            message: "API request failed (unknown); retry 1".into()
        }]
    );
}

#[test]
fn a_tool_result_is_named_after_its_call_and_errors_keep_their_text() {
    let lines = parse(
        Dialect::Qwen,
        &[
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"c1","name":"run_shell_command","input":{"command":"ls\nls -a"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":[{"type":"text","text":"no"},{"type":"text","text":"such file"}]},{"type":"tool_result","tool_use_id":"c9","content":"ok"}]}}"#,
        ],
    );
    assert_eq!(
        lines[0].events,
        [
            Event::Text {
                text: "Let me look.".into()
            },
            Event::ToolStarted {
                name: "run_shell_command".into(),
                title: Some("ls".into())
            }
        ]
    );
    assert_eq!(
        lines[1].events,
        [
            Event::Tool {
                name: "run_shell_command".into(),
                status: ToolStatus::Error,
                title: Some("ls".into()),
                error: Some("no\nsuch file".into())
            },
            Event::Tool {
                name: "?".into(),
                status: ToolStatus::Completed,
                title: None,
                error: None
            }
        ]
    );
}

#[test]
fn an_error_written_in_the_models_place_is_never_the_answer() {
    let synthetic = one(
        Dialect::Claude,
        r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 500 boom"}]}}"#,
    );
    assert!(synthetic.events.is_empty());
    let qwen = one(
        Dialect::Qwen,
        r#"{"type":"assistant","message":{"model":"qwen-fake","content":[{"type":"text","text":"[API Error: 500 boom]"}]}}"#,
    );
    assert!(qwen.events.is_empty());
}

#[test]
fn a_failed_claude_result_without_text_names_its_subtype_and_errors() {
    let result = one(
        Dialect::Claude,
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: x"],"session_id":"s"}"#,
    );
    assert_eq!(
        result.events[1],
        Event::Error {
            name: "error_during_execution".into(),
            message: "No conversation found with session ID: x".into(),
            status_code: None,
            retryable: None
        }
    );
    assert_eq!(result.events.last(), Some(&Event::Ended));
    // `api_error_status` alone fails the run, whatever `is_error` says.
    let status_only = one(
        Dialect::Claude,
        r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":529,"result":"Overloaded"}"#,
    );
    assert!(matches!(
        &status_only.events[1],
        Event::Error { name, status_code: Some(529), .. } if name == "api_error"
    ));
}
