//! OpenCode's success test: which rounds are done, and the one reason given when not.

use ganger_agents::opencode::{summarize_bytes, verdict};
use ganger_agents::{AgentExit, Verdict};

const START: &str = r#"{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}"#;
const TOOL: &str = r#"{"type":"tool_use","sessionID":"ses_1","part":{"tool":"write","state":{"status":"completed"}}}"#;
const CALLS: &str =
    r#"{"type":"step_finish","sessionID":"ses_1","part":{"reason":"tool-calls","cost":0.001}}"#;
const TEXT: &str = r#"{"type":"text","sessionID":"ses_1","part":{"text":"done"}}"#;
const STOP: &str =
    r#"{"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","cost":0.001}}"#;
const API_500: &str = r#"{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"fake server forced HTTP 500","statusCode":500,"isRetryable":true}}}"#;
const ASK: &str = r#"{"type":"tool_use","sessionID":"ses_1","part":{"tool":"edit","state":{"status":"error","error":"The user rejected permission to use this specific tool call."}}}"#;
const DENY: &str = r#"{"type":"tool_use","sessionID":"ses_1","part":{"tool":"bash","state":{"status":"error","error":"The user has specified a rule which prevents you from using this specific tool call. Relevant rules: bash"}}}"#;
const TOOL_ERROR: &str = r#"{"type":"tool_use","sessionID":"ses_1","part":{"tool":"read","state":{"status":"error","error":"File not found"}}}"#;

fn judge(lines: &[&str], exit: AgentExit) -> Verdict {
    let stream = lines
        .iter()
        .map(|line| format!("{line}\n"))
        .collect::<String>();
    verdict(&summarize_bytes(stream.as_bytes()), exit)
}

#[test]
fn a_finished_run_with_exit_zero_is_done_even_with_a_failed_tool_call() {
    let run = [START, TOOL, TOOL_ERROR, CALLS, START, TEXT, STOP];
    assert_eq!(judge(&run, AgentExit::Code(0)), Verdict::done());
}

#[test]
fn every_failure_names_its_cause() {
    let ok = [START, TOOL, CALLS, START, TEXT, STOP];
    let cases: [(&[&str], AgentExit, &str); 11] = [
        (
            &[API_500],
            AgentExit::Code(1),
            "OpenCode reported an error: APIError (HTTP 500): fake server forced HTTP 500",
        ),
        (
            &[START, API_500, API_500, API_500],
            AgentExit::Code(0),
            "OpenCode reported an error: APIError (HTTP 500): fake server forced HTTP 500 (and 2 more errors)",
        ),
        (
            &[START, ASK, CALLS],
            AgentExit::Code(0),
            "a tool call was refused by OpenCode's permissions (a permission set to ask, auto-rejected in a headless run): edit: The user rejected permission to use this specific tool call.",
        ),
        (
            &[START, DENY, CALLS, START, DENY, STOP],
            AgentExit::Code(0),
            "a tool call was refused by OpenCode's permissions (a permission set to deny): bash: The user has specified a rule which prevents you from using this specific tool call. Relevant rules: bash (and 1 more refusal)",
        ),
        (&ok, AgentExit::Code(1), "OpenCode exited with code 1"),
        (
            &ok,
            AgentExit::Signal(9),
            "OpenCode was killed by signal 9 (SIGKILL)",
        ),
        (
            &[],
            AgentExit::Code(0),
            "OpenCode exited 0 without printing any event",
        ),
        (
            &["Error: something went wrong", "{not json"],
            AgentExit::Code(0),
            "OpenCode exited 0 without printing any event (2 lines were not JSON events)",
        ),
        (
            &[START, TOOL, CALLS, START],
            AgentExit::Code(0),
            "the last step never finished (no step_finish after the last step_start)",
        ),
        (
            &[START, TOOL],
            AgentExit::Code(0),
            "OpenCode never finished a step (no step_finish)",
        ),
        (
            &[START, API_500],
            AgentExit::Signal(15),
            "OpenCode reported an error: APIError (HTTP 500): fake server forced HTTP 500",
        ),
    ];
    for (lines, exit, reason) in cases {
        assert_eq!(
            judge(lines, exit),
            Verdict::failed(reason),
            "{lines:?} {exit}"
        );
    }
}

/// `opencode run` stops at a refused call, so the refusal fails a read-only round as well:
/// its work stopped there.
#[test]
fn a_refusal_fails_even_a_read_only_round_since_opencode_stops_there() {
    let opencode = ganger_agents::adapter("opencode").unwrap();
    let data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/opencode/opencode-perm-ask-autorejected.jsonl"
    ))
    .unwrap();
    let summary = ganger_agents::summarize_stream(opencode.stream_parser().as_mut(), &data);
    for permission in [
        ganger_agents::Permission::Write,
        ganger_agents::Permission::ReadOnly,
    ] {
        for sandboxed in [false, true] {
            let verdict =
                opencode.round_verdict(&summary, AgentExit::Code(0), permission, sandboxed);
            assert!(!verdict.done, "{permission:?} {sandboxed}");
        }
    }
}
