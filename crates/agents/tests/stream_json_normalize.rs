//! The full parse of single stream-json lines: each kind of line, the error shapes of both
//! CLIs, and lines of an unexpected shape.
#![cfg(test)]

use ganger_agents::stream_json::{Dialect, StreamJsonParser};
use ganger_agents::{ParsedLine, StreamParser, summarize_stream};
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

/// The `system/init` and `result` lines (trimmed) of four cold rounds of one Claude Code 2.1.332
/// session, recorded against the scripted model (docs/agents/claude-measured.md, "Cost of a
/// resumed round"): a new session (Write, then text), `--resume` (Bash, then text), `--resume`
/// failing with HTTP 401, and a fork at round 2's last answer (`--resume-session-at
/// --fork-session`, a new session id).
const CLAUDE_332_ROUNDS: [(&str, &str, f64); 4] = [
    (
        r#"{"type":"system","subtype":"init","session_id":"6edd7319-7ddd-4162-8ac8-26c776958704","model":"claude-fake","claude_code_version":"2.1.332"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"num_turns":2,"result":"Done round 1. history: 5 messages, 1 too…","stop_reason":"end_turn","session_id":"6edd7319-7ddd-4162-8ac8-26c776958704","total_cost_usd":0.033152,"usage":{"input_tokens":8068,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":44},"modelUsage":{"claude-fake":{"inputTokens":8068,"outputTokens":44,"costUSD":0.033152}},"terminal_reason":"completed","result_index":0,"model_usage_since_last_result":{"claude-fake":{"inputTokens":8068,"outputTokens":44,"costUSD":0.033152}}}"#,
        0.033152,
    ),
    (
        r#"{"type":"system","subtype":"init","session_id":"6edd7319-7ddd-4162-8ac8-26c776958704","model":"claude-fake","claude_code_version":"2.1.332"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"num_turns":2,"result":"Done round 2. history: 9 messages, 2 too…","stop_reason":"end_turn","session_id":"6edd7319-7ddd-4162-8ac8-26c776958704","total_cost_usd":0.066712,"usage":{"input_tokens":8170,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":44},"modelUsage":{"claude-fake":{"inputTokens":16238,"outputTokens":88,"costUSD":0.066712}},"terminal_reason":"completed","result_index":0,"model_usage_since_last_result":{"claude-fake":{"inputTokens":8170,"outputTokens":44,"costUSD":0.03356}}}"#,
        0.03356,
    ),
    (
        r#"{"type":"system","subtype":"init","session_id":"6edd7319-7ddd-4162-8ac8-26c776958704","model":"claude-fake","claude_code_version":"2.1.332"}"#,
        r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"num_turns":1,"result":"Failed to authenticate. API Error: 401 f…","stop_reason":"stop_sequence","session_id":"6edd7319-7ddd-4162-8ac8-26c776958704","total_cost_usd":0.066712,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"modelUsage":{"claude-fake":{"inputTokens":16238,"outputTokens":88,"costUSD":0.066712}},"terminal_reason":"api_error","result_index":0,"model_usage_since_last_result":{}}"#,
        0.0,
    ),
    (
        r#"{"type":"system","subtype":"init","session_id":"f86b287d-b265-4769-9cb0-577dba8cb93c","model":"claude-fake","claude_code_version":"2.1.332"}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"num_turns":1,"result":"Done round 4. history: 11 messages, 2 to…","stop_reason":"end_turn","session_id":"f86b287d-b265-4769-9cb0-577dba8cb93c","total_cost_usd":0.10162399999999999,"usage":{"input_tokens":4128,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":43},"modelUsage":{"claude-fake":{"inputTokens":24501,"outputTokens":181,"costUSD":0.10162399999999999}},"terminal_reason":"completed","result_index":0,"model_usage_since_last_result":{"claude-fake":{"inputTokens":4128,"outputTokens":43,"costUSD":0.017372}}}"#,
        0.017372,
    ),
];

fn summary(dialect: Dialect, lines: &[&str]) -> ganger_events::RoundSummary {
    summarize_stream(
        &mut StreamJsonParser::new(dialect),
        lines.join("\n").as_bytes(),
    )
}

/// Claude Code 2.1.332's `total_cost_usd` is the session's running cost, on cold `--resume`
/// rounds too (and a fork carries its parent's); a round's own cost is
/// `model_usage_since_last_result`'s. Each round costs only its own requests, a round the API
/// refused nothing, while the tokens stay `result.usage`'s.
#[test]
fn a_resumed_claude_round_costs_only_its_own_requests() {
    let mut rounds = Vec::new();
    for (init, result, own) in CLAUDE_332_ROUNDS {
        let round = summary(Dialect::Claude, &[init, result]);
        assert_eq!(round.cost_usd, Some(own), "{result}");
        rounds.push(round);
    }
    assert_eq!(
        (rounds[1].tokens.input, rounds[1].tokens.output),
        (8170, 44)
    );
    assert_eq!(rounds[1].session_tokens, None);
    // The rounds of the session add up to its running cost, nothing counted twice.
    let session: f64 = rounds[..3].iter().filter_map(|r| r.cost_usd).sum();
    assert!((session - 0.066712).abs() < 1e-12, "{session}");
}

/// A run that used more than one model (a sub-agent's, say) costs all of them; a release
/// without `model_usage_since_last_result` (2.1.197, whose `total_cost_usd` is the run's own:
/// its round 2 after `--resume`, 2140 in and 50 out at $5/$25) is taken at `total_cost_usd`;
/// Qwen Code reports no cost at all.
#[test]
fn a_claude_round_costs_every_model_it_used_and_older_releases_their_total() {
    let two_models = summary(
        Dialect::Claude,
        &[
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","total_cost_usd":9.0,"usage":{"input_tokens":10,"output_tokens":2},"model_usage_since_last_result":{"claude-fake":{"costUSD":0.25},"claude-haiku-4-5":{"costUSD":0.125},"odd":{"costUSD":"x"}}}"#,
        ],
    );
    assert_eq!(two_models.cost_usd, Some(0.375));
    let older = summary(
        Dialect::Claude,
        &[
            r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"num_turns":2,"result":"Done round 2.","stop_reason":"end_turn","session_id":"0d54be32-b686-4109-b4c6-7b2b846a9fd4","total_cost_usd":0.011949999999999999,"usage":{"input_tokens":2140,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":50},"modelUsage":{"claude-fake":{"inputTokens":2140,"outputTokens":50,"costUSD":0.011949999999999999}},"permission_denials":[],"terminal_reason":"completed"}"#,
        ],
    );
    assert_eq!(older.cost_usd, Some(0.01195));
    let qwen = summary(
        Dialect::Qwen,
        &[
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","usage":{"input_tokens":4280,"output_tokens":80},"model_usage_since_last_result":{"qwen-fake":{"costUSD":0.5}}}"#,
        ],
    );
    assert_eq!(qwen.cost_usd, None);
}
