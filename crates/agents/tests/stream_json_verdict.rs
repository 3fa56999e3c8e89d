//! The success test of Claude Code and Qwen Code rounds: which are done, and the one reason
//! given when not.
#![cfg(test)]

use crate::stream_json_common;

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
const DENIED_NOW: &str = r#"{"type":"system","subtype":"permission_denied","tool_name":"Write","tool_use_id":"t1","decision_reason_type":"workingDir","decision_reason":"Path is outside allowed working directories","message":"Claude requested permissions to write to /p/a.txt, but you haven't granted it yet.","session_id":"s1"}"#;
const SUCCESS_DENIED: &str = r#"{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"result":"Done.","session_id":"s1","usage":{"input_tokens":10,"output_tokens":2},"permission_denials":[{"tool_name":"Write","tool_use_id":"t1","tool_input":{"file_path":"/p/a.txt"}}]}"#;
const QWEN_401_EXIT_1: &str = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s1","usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[],"error":{"message":"[API Error: 401 fake-llm: scripted fault http-401 (HTTP 401)]"}}"#;
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
fn a_success_result_and_exit_zero_is_done() {
    let ok = [INIT, CALL, DONE, TEXT, SUCCESS];
    // A failed tool call is the model's to handle, as long as no permission refused it.
    let tool_error = [INIT, CALL, DENIED, TEXT, SUCCESS];
    for dialect in [Dialect::Claude, Dialect::Qwen] {
        assert_eq!(judge(dialect, &ok, AgentExit::Code(0)), Verdict::done());
        assert_eq!(
            judge(dialect, &tool_error, AgentExit::Code(0)),
            Verdict::done()
        );
    }
    for name in [
        "claude-2.1.197-round1",
        "claude-2.1.197-round2",
        "claude-2.1.197-shell",
        "claude-2.1.332-round1",
        "claude-2.1.332-round2",
        // Read-only withholds the writing tools: a call to one is an unknown tool, not a refusal.
        "claude-2.1.332-perm-readonly",
    ] {
        let verdict = judge_recorded(Dialect::Claude, "claude", name, AgentExit::Code(0));
        assert_eq!(verdict, Verdict::done(), "{name}");
    }
    for name in [
        "qwen-0.15.10-round1",
        "qwen-0.15.10-round2",
        "qwen-0.24.4-round1",
        "qwen-0.24.4-round2",
    ] {
        let verdict = judge_recorded(Dialect::Qwen, "qwen", name, AgentExit::Code(0));
        assert_eq!(verdict, Verdict::done(), "{name}");
    }
}

/// Issue 14: a round whose only write a permission refused was reported `done`, exit 0, with
/// nothing written. Both Claude versions, whether the refusal comes as a `permission_denied`
/// line (2.1.332) or only in the result's `permission_denials` (2.1.197, and Qwen).
#[test]
fn a_call_refused_by_a_permission_fails_the_round_naming_the_tool_and_the_reason() {
    for (lines, reason) in [
        (
            &[INIT, CALL, DENIED_NOW, DENIED, TEXT, SUCCESS_DENIED][..],
            "a tool call was refused by Claude Code's permissions: Write: Path is outside allowed working directories (/p/a.txt)",
        ),
        (
            &[INIT, CALL, DENIED, TEXT, SUCCESS_DENIED][..],
            "a tool call was refused by Claude Code's permissions: Write: Claude requested permissions to write to /p/a.txt, but you haven't granted it yet.",
        ),
    ] {
        assert_eq!(
            judge(Dialect::Claude, lines, AgentExit::Code(0)),
            Verdict::failed(reason),
            "{lines:?}"
        );
    }
    let cases = [
        (
            "claude-2.1.332-perm-outside",
            "a tool call was refused by Claude Code's permissions: Write: Path is outside allowed working directories (/home/dev/elsewhere/denied.txt)",
        ),
        (
            "claude-2.1.197-perm-outside",
            "a tool call was refused by Claude Code's permissions: Write: Claude requested permissions to write to /home/dev/elsewhere/denied.txt, but you haven't granted it yet.",
        ),
        (
            "claude-2.1.332-perm-dontask",
            "a tool call was refused by Claude Code's permissions: Write: Permission to use Write has been denied because Claude Code is running in don't ask mode. (/home/dev/project/perm-write.txt) (and 1 more refusal)",
        ),
        (
            "claude-2.1.197-perm-default-denied",
            "a tool call was refused by Claude Code's permissions: Write: Claude requested permissions to write to /home/dev/project/round1.txt, but you haven't granted it yet.",
        ),
    ];
    for (name, reason) in cases {
        let verdict = judge_recorded(Dialect::Claude, "claude", name, AgentExit::Code(0));
        assert_eq!(verdict, Verdict::failed(reason), "{name}");
    }
    for name in ["qwen-0.15.10-perm-default", "qwen-0.24.4-perm-default"] {
        let verdict = judge_recorded(Dialect::Qwen, "qwen", name, AgentExit::Code(0));
        assert_eq!(
            verdict,
            Verdict::failed(
                "a tool call was refused by Qwen Code's permissions: write_file: Qwen Code requires permission to use \"write_file\", but that permission was declined. Matching deny rule: \"edit\". (/home/dev/project/perm-write.txt) (and 2 more refusals)"
            ),
            "{name}"
        );
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
            "claude-2.1.197-error-401",
            "Claude Code reported an error: api_error (HTTP 401): Failed to authenticate. API Error: 401 fake server forced HTTP 401",
        ),
        (
            "claude-2.1.197-error-connrefused",
            "Claude Code reported an error: api_error: API Error: Unable to connect to API (ConnectionRefused)",
        ),
        (
            "claude-2.1.332-error-401",
            "Claude Code reported an error: api_error (HTTP 401): Failed to authenticate. API Error: 401 fake-llm: scripted fault http-401 (HTTP 401)",
        ),
        (
            "claude-2.1.332-error-connrefused",
            "Claude Code reported an error: api_error: API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
        ),
    ];
    for (name, reason) in cases {
        let verdict = judge_recorded(Dialect::Claude, "claude", name, AgentExit::Code(1));
        assert_eq!(verdict, Verdict::failed(reason), "{name}");
    }
    // A 500 comes with `subtype: "success"` and `is_error: true`.
    for (name, message) in [
        (
            "claude-2.1.197-error-500-maxretries2",
            "fake server forced HTTP 500.",
        ),
        (
            "claude-2.1.332-error-500",
            "fake-llm: scripted fault http-500 (HTTP 500).",
        ),
    ] {
        let verdict = judge_recorded(Dialect::Claude, "claude", name, AgentExit::Code(1));
        let reason = verdict.reason.unwrap();
        assert!(
            reason.starts_with(&format!(
                "Claude Code reported an error: api_error (HTTP 500): API Error: 500 {message}"
            )),
            "{name}: {reason}"
        );
    }
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
            "qwen-0.15.10-error-401",
            "Qwen Code reported an error: api_error (HTTP 401): fake server forced HTTP 401",
        ),
        (
            "qwen-0.15.10-error-500",
            "Qwen Code reported an error: api_error (HTTP 500): fake server forced HTTP 500",
        ),
        (
            "qwen-0.15.10-error-connrefused",
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

/// Issue 14: Qwen 0.24.4 ends an API error with exit 1 and a result of subtype
/// `error_during_execution` whose message is in `error.message`, not `result`; the round's
/// reason was "the result line gave no details".
#[test]
fn qwen_0_24_api_errors_name_the_model_s_status_and_message() {
    assert_eq!(
        judge(Dialect::Qwen, &[INIT, QWEN_401_EXIT_1], AgentExit::Code(1)),
        Verdict::failed(
            "Qwen Code reported an error: api_error (HTTP 401): fake-llm: scripted fault http-401 (HTTP 401)"
        )
    );
    let cases = [
        (
            "qwen-0.24.4-error-401",
            "Qwen Code reported an error: api_error (HTTP 401): fake-llm: scripted fault http-401 (HTTP 401)",
        ),
        (
            "qwen-0.24.4-error-500",
            "Qwen Code reported an error: api_error (HTTP 500): fake-llm: scripted fault http-500 (HTTP 500)",
        ),
        (
            "qwen-0.24.4-error-connrefused",
            "Qwen Code reported an error: api_error: Connection error. (cause: connect ECONNREFUSED 127.0.0.1:18499)",
        ),
    ];
    for (name, reason) in cases {
        let verdict = judge_recorded(Dialect::Qwen, "qwen", name, AgentExit::Code(1));
        assert_eq!(verdict, Verdict::failed(reason), "{name}");
    }
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

/// A read-only round's refusals are the guard doing what was asked: the round is judged on
/// the rest. The same refusals in a round that may write (a deny rule of the user's) fail it.
#[test]
fn refusals_fail_a_round_that_may_write_and_are_only_listed_in_a_read_only_one() {
    use ganger_agents::{Permission, adapter};
    let qwen = adapter("qwen").unwrap();
    for (name, permission, done) in [
        ("qwen-0.24.4-perm-default", Permission::ReadOnly, true),
        ("qwen-0.15.10-perm-default", Permission::ReadOnly, true),
        ("qwen-0.24.4-perm-deny-rule", Permission::Write, false),
        ("qwen-0.15.10-perm-deny-rule", Permission::Write, false),
    ] {
        let data = recorded("qwen", name);
        let summary = ganger_agents::summarize_stream(qwen.stream_parser().as_mut(), &data);
        assert!(summary.rejection_count > 0, "{name}");
        let verdict = qwen.round_verdict(&summary, AgentExit::Code(0), permission, false);
        assert_eq!(verdict.done, done, "{name}: {verdict:?}");
        // In ganger's sandbox the sandbox is the boundary: refusals are listed, not failures.
        let boxed = qwen.round_verdict(&summary, AgentExit::Code(0), permission, true);
        assert!(boxed.done, "{name}: {boxed:?}");
    }
    let claude = adapter("claude").unwrap();
    let data = recorded("claude", "claude-2.1.332-perm-outside");
    let summary = ganger_agents::summarize_stream(claude.stream_parser().as_mut(), &data);
    assert!(
        !claude
            .round_verdict(&summary, AgentExit::Code(0), Permission::Write, false)
            .done
    );
    assert!(
        claude
            .round_verdict(&summary, AgentExit::Code(0), Permission::ReadOnly, false)
            .done
    );
}
