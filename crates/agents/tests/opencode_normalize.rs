//! The full parse of single OpenCode lines: each kind of line, the shapes OpenCode prints, and
//! what happens to lines of an unexpected shape.

use ganger_agents::ParsedLine;
use ganger_agents::opencode::{is_permission_refusal, parse_line};
use ganger_events::{Event, ToolStatus, Usage, UsageMode};

const SESSION: &str = "ses_dd5d7c9d5ffeRjeifnKjsvTjhh";

fn line(kind: &str, events: Vec<Event>) -> ParsedLine {
    ParsedLine {
        kind: Some(kind.to_owned()),
        events,
    }
}

fn session() -> Event {
    Event::Session {
        id: SESSION.to_owned(),
    }
}

fn malformed() -> ParsedLine {
    ParsedLine {
        kind: None,
        events: Vec::new(),
    }
}

fn tool_use(state: &str) -> String {
    format!(
        r#"{{"type":"tool_use","timestamp":1,"sessionID":"{SESSION}","part":{{"type":"tool","tool":"write","callID":"call_1","state":{state}}}}}"#
    )
}

#[test]
fn an_auto_rejected_permission_is_a_rejection_not_a_tool_error() {
    // The line of opencode-perm-ask-autorejected.jsonl.
    let recorded = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode/opencode-perm-ask-autorejected.jsonl"
    ))
    .unwrap();
    let recorded = recorded
        .lines()
        .find(|line| line.contains(r#""type":"tool_use""#))
        .unwrap();
    assert_eq!(
        parse_line(recorded.as_bytes()),
        line(
            "tool_use",
            vec![
                session(),
                Event::PermissionRejected {
                    tool: "write".into(),
                    message: "The user rejected permission to use this specific tool call.".into(),
                },
            ]
        )
    );
}

#[test]
fn permission_refusals_are_recognized_in_their_variants() {
    let refusals = [
        "The user rejected permission to use this specific tool call.",
        "The user rejected permission to use this specific tool call with the following feedback: no",
        "the user rejected permission to use this specific tool call",
        "Error: The user rejected permission to use this specific tool call.\n",
        "The user has specified a rule which prevents you from using this specific tool call. Relevant rules: edit",
    ];
    for refusal in refusals {
        assert!(is_permission_refusal(refusal), "{refusal}");
    }
    let other = [
        "File not found: round1.txt",
        "The user rejected the plan",
        "",
    ];
    for error in other {
        assert!(!is_permission_refusal(error), "{error}");
    }
}

#[test]
fn an_ordinary_tool_error_is_a_failed_tool_call() {
    let state =
        r#"{"status":"error","input":{"filePath":"x"},"error":"File not found: x","title":"x"}"#;
    assert_eq!(
        parse_line(tool_use(state).as_bytes()),
        line(
            "tool_use",
            vec![
                session(),
                Event::Tool {
                    name: "write".into(),
                    status: ToolStatus::Error,
                    title: Some("x".into()),
                    error: Some("File not found: x".into()),
                },
            ]
        )
    );
}

#[test]
fn tool_statuses_map_and_an_unreadable_status_is_unknown() {
    let tool = |status, title: Option<&str>| {
        line(
            "tool_use",
            vec![
                session(),
                Event::Tool {
                    name: "write".into(),
                    status,
                    title: title.map(str::to_owned),
                    error: None,
                },
            ],
        )
    };
    let unknown = line(
        "tool_use",
        vec![
            session(),
            Event::Unknown {
                kind: "tool_use".into(),
            },
        ],
    );
    let cases = [
        (
            r#"{"status":"completed","title":"t"}"#,
            tool(ToolStatus::Completed, Some("t")),
        ),
        (
            r#"{"status":"running","title":7}"#,
            tool(ToolStatus::Running, None),
        ),
        (r#"{"status":"pending"}"#, tool(ToolStatus::Running, None)),
        (r#"{"status":"Completed"}"#, unknown.clone()),
        (r#"{"status":5}"#, unknown.clone()),
        (r#"{}"#, unknown.clone()),
        (r#"[{"status":"completed"}]"#, unknown.clone()),
        (r#""completed""#, unknown),
    ];
    for (state, expected) in cases {
        assert_eq!(parse_line(tool_use(state).as_bytes()), expected, "{state}");
    }
    // A part without a tool name still counts as a tool call.
    let nameless = br#"{"type":"tool_use","part":{"state":{"status":"completed"}}}"#;
    assert_eq!(
        parse_line(nameless),
        line(
            "tool_use",
            vec![Event::Tool {
                name: "?".into(),
                status: ToolStatus::Completed,
                title: None,
                error: None,
            }]
        )
    );
}

#[test]
fn error_lines_read_in_both_shapes() {
    // OpenCode 1.18.33, as in opencode-error-401.jsonl (shortened).
    let api = br#"{"type":"error","timestamp":1,"sessionID":"ses_dd5d7c9d5ffeRjeifnKjsvTjhh","error":{"name":"APIError","data":{"message":"fake server forced HTTP 401","statusCode":401,"isRetryable":false,"responseBody":"{}"}}}"#;
    assert_eq!(
        parse_line(api),
        line(
            "error",
            vec![
                session(),
                Event::Error {
                    name: "APIError".into(),
                    message: "fake server forced HTTP 401".into(),
                    status_code: Some(401),
                    retryable: Some(false),
                },
            ]
        )
    );
    // The seed's fake launcher (FAKE_FAIL=1).
    let seed = br#"{"type":"error","timestamp":1796007748249,"sessionID":"ses_dd5d7c9d5ffeRjeifnKjsvTjhh","error":{"type":"provider.no-route","message":"Model unavailable: opencode/deepseek-v4.1-flash-free"}}"#;
    assert_eq!(
        parse_line(seed),
        line(
            "error",
            vec![
                session(),
                Event::Error {
                    name: "provider.no-route".into(),
                    message: "Model unavailable: opencode/deepseek-v4.1-flash-free".into(),
                    status_code: None,
                    retryable: None,
                },
            ]
        )
    );
}

#[test]
fn an_error_line_of_any_shape_is_still_an_error() {
    let error = |name: &str, message: &str| {
        line(
            "error",
            vec![Event::Error {
                name: name.into(),
                message: message.into(),
                status_code: None,
                retryable: None,
            }],
        )
    };
    let no_details = error("Error", "the error line gave no details");
    let cases: [(&[u8], ParsedLine); 6] = [
        (br#"{"type":"error"}"#, no_details.clone()),
        (br#"{"type":"error","error":5}"#, no_details.clone()),
        (
            br#"{"type":"error","error":[{"name":"x"}]}"#,
            no_details.clone(),
        ),
        (br#"{"type":"error","error":{}}"#, no_details),
        (
            br#"{"type":"error","error":"boom"}"#,
            error("Error", "boom"),
        ),
        (
            br#"{"type":"error","error":{"name":"MessageOutputLengthError","data":{}}}"#,
            error("MessageOutputLengthError", ""),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            parse_line(text),
            expected,
            "{}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn steps_text_and_reasoning() {
    let finish = br#"{"type":"step_finish","sessionID":"ses_dd5d7c9d5ffeRjeifnKjsvTjhh","part":{"reason":"stop","tokens":{"total":1100,"input":1080,"output":20,"reasoning":3,"cache":{"write":2,"read":1}},"cost":0.00354}}"#;
    assert_eq!(
        parse_line(finish),
        line(
            "step_finish",
            vec![
                session(),
                Event::StepFinished {
                    reason: Some("stop".into()),
                    usage: Usage {
                        input: 1080,
                        output: 20,
                        reasoning: 3,
                        cache_read: 1,
                        cache_write: 2,
                        cost_usd: Some(0.00354),
                        mode: UsageMode::Delta,
                    },
                },
            ]
        )
    );
    // Nothing of a step_finish is mandatory: odd fields read as absent, the step finished.
    let odd = br#"{"type":"step_finish","part":{"reason":1,"tokens":{"input":-1,"output":2.5,"cache":[]},"cost":"free"}}"#;
    let bare = line(
        "step_finish",
        vec![Event::StepFinished {
            reason: None,
            usage: Usage::default(),
        }],
    );
    assert_eq!(parse_line(odd), bare);
    assert_eq!(parse_line(br#"{"type":"step_finish"}"#), bare);
    let text = br#"{"type":"text","part":{"type":"text","text":"caf\u00e9 \"ok\"\n"}}"#;
    assert_eq!(
        parse_line(text),
        line(
            "text",
            vec![Event::Text {
                text: "café \"ok\"\n".into()
            }]
        )
    );
    assert_eq!(
        parse_line(br#"{"type":"text","part":{"text":null}}"#),
        line(
            "text",
            vec![Event::Unknown {
                kind: "text".into()
            }]
        )
    );
    let reasoning = br#"{"type":"reasoning","sessionID":"ses_dd5d7c9d5ffeRjeifnKjsvTjhh","part":{"type":"reasoning","text":"thinking"}}"#;
    assert_eq!(parse_line(reasoning), line("reasoning", vec![session()]));
    assert_eq!(
        parse_line(br#"{"type":"step_start","sessionID":7}"#),
        line("step_start", vec![Event::StepStarted])
    );
}

#[test]
fn unknown_types_are_kept_and_malformed_lines_are_only_counted() {
    assert_eq!(
        parse_line(br#"{"type":"session.idle","sessionID":"ses_dd5d7c9d5ffeRjeifnKjsvTjhh"}"#),
        line(
            "session.idle",
            vec![
                session(),
                Event::Unknown {
                    kind: "session.idle".into()
                },
            ]
        )
    );
    let bad: [&[u8]; 9] = [
        b"not json",
        b"[1,2]",
        b"\"step_start\"",
        br#"{"sessionID":"x"}"#,
        br#"{"type":5}"#,
        br#"{"type":null}"#,
        br#"{"type":"text""#,
        b"{\"type\":\"text\",\"x\":\"\xff\"}",
        br#"{"type":"text"} x"#,
    ];
    for text in bad {
        assert_eq!(
            parse_line(text),
            malformed(),
            "{}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn the_last_of_duplicate_keys_wins_and_escaped_keys_are_keys() {
    assert_eq!(
        parse_line(br#"{"type":"text","type":"step_start"}"#),
        line("step_start", vec![Event::StepStarted])
    );
    assert_eq!(
        parse_line(br#"{"typ\u0065":"step_start"}"#),
        line("step_start", vec![Event::StepStarted])
    );
    assert_eq!(
        parse_line(br#" { "type" : "step_start" } "#),
        line("step_start", vec![Event::StepStarted])
    );
}
