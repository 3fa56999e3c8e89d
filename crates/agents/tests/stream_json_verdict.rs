//! The success test of Claude Code and Qwen Code rounds: which are done, and the one reason
//! given when not.
#![cfg(test)]

mod stream_json_common;

use ganger_agents::stream_json::{Dialect, verdict};
use ganger_agents::{AgentExit, Verdict};
use stream_json_common::{fixtures, summarize_lines};

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#;
const CALL: &str = r#"{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/p/a.txt"}}]},"session_id":"s1"}"#;
const DONE: &str = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},"session_id":"s1"}"#;
const DENIED: &str = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"Claude requested permissions to write to /p/a.txt, but you haven't granted it yet."}]},"session_id":"s1"}"#;
const TEXT: &str = r#"{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"Done."}]},"session_id":"s1"}"#;
const SUCCESS: &str = r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"result":"Done.","stop_reason":"end_turn","session_id":"s1","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":2}}"#;
const RETRY_500: &str = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"error_status":500,"error":"server_error","session_id":"s1"}"#;
const SYNTHETIC_500: &str = r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 500 boom"}]},"session_id":"s1"}"#;
const RESULT_500: &str = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 boom","session_id":"s1","total_cost_usd":0}"#;
const QWEN_401: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"[API Error: 401 fake server forced HTTP 401]","session_id":"s1","usage":{"input_tokens":0,"output_tokens":0}}"#;

fn judge(dialect: Dialect, lines: &[&str], exit: AgentExit) -> Verdict {
    verdict(dialect, &summarize_lines(dialect, lines), exit)
}

fn recorded(dir: &str, name: &str) -> Vec<u8> {
    fixtures(dir)
        .into_iter()
        .find(|(found, _)| found == name)
        .map(|(_, data)| data)
        .unwrap()
}

fn judge_recorded(dialect: Dialect, dir: &str, name: &str, exit: AgentExit) -> Verdict {
    let data = recorded(dir, name);
    let summary = ganger_agents::summarize_stream(
        &mut ganger_agents::stream_json::StreamJsonParser::new(dialect),
        &data,
    );
    verdict(dialect, &summary, exit)
}

#[test]
fn a_success_result_and_exit_zero_is_done_even_after_a_refused_permission() {
    let ok = [INIT, CALL, DONE, TEXT, SUCCESS];
    let denied = [INIT, CALL, DENIED, TEXT, SUCCESS];
    for dialect in [Dialect::Claude, Dialect::Qwen] {
        assert_eq!(judge(dialect, &ok, AgentExit::Code(0)), Verdict::done());
        assert_eq!(judge(dialect, &denied, AgentExit::Code(0)), Verdict::done());
    }
    for (dir, name) in [
        ("claude", "claude-round1"),
        ("claude", "claude-round2"),
        ("claude", "claude-shell"),
        ("claude", "claude-perm-default-denied"),
    ] {
        let verdict = judge_recorded(Dialect::Claude, dir, name, AgentExit::Code(0));
        assert_eq!(verdict, Verdict::done(), "{name}");
    }
    for name in ["qwen-round1", "qwen-round2"] {
        let verdict = judge_recorded(Dialect::Qwen, "qwen", name, AgentExit::Code(0));
        assert_eq!(verdict, Verdict::done(), "{name}");
    }
}

#[test]
fn claude_failures_name_the_real_cause() {
    let cases: [(&[&str], AgentExit, &str); 5] = [
        (
            &[INIT, RETRY_500, SYNTHETIC_500, RESULT_500],
            AgentExit::Code(1),
            "Claude Code reported an error: api_error (HTTP 500): API Error: 500 boom",
        ),
        (
            &[INIT, CALL, DONE],
            AgentExit::Code(1),
            "the stream ended without a result line (exited with code 1)",
        ),
        (
            &[INIT, RETRY_500, RETRY_500],
            AgentExit::Signal(15),
            "the stream ended without a result line after 2 retry notices (killed by signal 15 (SIGTERM))",
        ),
        (
            &[INIT, TEXT, SUCCESS],
            AgentExit::Code(1),
            "Claude Code exited with code 1 after reporting success",
        ),
        (
            &[],
            AgentExit::Code(0),
            "the stream ended without a result line (exited with code 0)",
        ),
    ];
    for (lines, exit, reason) in cases {
        assert_eq!(
            judge(Dialect::Claude, lines, exit),
            Verdict::failed(reason),
            "{lines:?}"
        );
    }
}

#[test]
fn recorded_claude_errors_name_the_api_error_and_its_status() {
    let cases = [
        (
            "claude-error-401",
            "Claude Code reported an error: api_error (HTTP 401): Failed to authenticate. API Error: 401 fake server forced HTTP 401",
        ),
        (
            "claude-error-connrefused",
            "Claude Code reported an error: api_error: API Error: Unable to connect to API (ConnectionRefused)",
        ),
    ];
    for (name, reason) in cases {
        let verdict = judge_recorded(Dialect::Claude, "claude", name, AgentExit::Code(1));
        assert_eq!(verdict, Verdict::failed(reason), "{name}");
    }
    // A 500 comes with `subtype: "success"` and `is_error: true`.
    let verdict = judge_recorded(
        Dialect::Claude,
        "claude",
        "claude-error-500-maxretries2",
        AgentExit::Code(1),
    );
    let reason = verdict.reason.unwrap();
    assert!(
        reason.starts_with(
            "Claude Code reported an error: api_error (HTTP 500): API Error: 500 fake server forced HTTP 500."
        ),
        "{reason}"
    );
}

#[test]
fn qwen_api_errors_fail_the_round_despite_exit_zero() {
    assert_eq!(
        judge(Dialect::Qwen, &[INIT, QWEN_401], AgentExit::Code(0)),
        Verdict::failed(
            "Qwen Code reported an error: api_error (HTTP 401): fake server forced HTTP 401"
        )
    );
    let cases = [
        (
            "qwen-error-401",
            "Qwen Code reported an error: api_error (HTTP 401): fake server forced HTTP 401",
        ),
        (
            "qwen-error-500",
            "Qwen Code reported an error: api_error (HTTP 500): fake server forced HTTP 500",
        ),
        (
            "qwen-error-connrefused",
            "Qwen Code reported an error: api_error: Connection error. (cause: fetch failed)",
        ),
    ];
    for (name, reason) in cases {
        let verdict = judge_recorded(Dialect::Qwen, "qwen", name, AgentExit::Code(0));
        assert_eq!(verdict, Verdict::failed(reason), "{name}");
    }
    // The same text is only an answer for Claude, which reports its errors otherwise.
    assert_eq!(
        judge(Dialect::Claude, &[INIT, QWEN_401], AgentExit::Code(0)),
        Verdict::done()
    );
}

#[test]
fn qwen_cut_before_its_result_or_failing_after_it_is_not_done() {
    assert_eq!(
        judge(
            Dialect::Qwen,
            &[INIT, CALL, DONE, TEXT],
            AgentExit::Signal(9)
        ),
        Verdict::failed("the stream ended without a result line (killed by signal 9 (SIGKILL))")
    );
    assert_eq!(
        judge(Dialect::Qwen, &[INIT, TEXT, SUCCESS], AgentExit::Code(1)),
        Verdict::failed("Qwen Code exited with code 1 after reporting success")
    );
}
