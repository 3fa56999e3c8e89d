//! Gemini CLI's success test: which rounds are done, and the one reason given when not.
#![cfg(test)]

use crate::common;

use common::recorded::summary_of;
use ganger_agents::{AgentExit, Verdict, adapter};

const INIT: &str = r#"{"type":"init","timestamp":"2026-11-30T02:04:29.368Z","session_id":"8bb81ce9-62f7-4e36-91cf-820ec6841ca1","model":"gemini-fake"}"#;
const USER: &str =
    r#"{"type":"message","timestamp":"2026-11-30T02:04:29.369Z","role":"user","content":"hi"}"#;
const WRITE: &str = r#"{"type":"tool_use","timestamp":"…","tool_name":"write_file","tool_id":"write_file__1","parameters":{"file_path":"/w/a.txt","content":"x"}}"#;
const WRITE_FAILED: &str = r#"{"type":"tool_result","timestamp":"…","tool_id":"write_file__1","status":"error","output":"File path must be absolute: a.txt","error":{"type":"invalid_tool_params","message":"File path must be absolute: a.txt"}}"#;
const WRITE_OUTSIDE: &str = r#"{"type":"tool_result","timestamp":"…","tool_id":"write_file__1","status":"error","output":"Path not in workspace","error":{"type":"invalid_tool_params","message":"Path not in workspace: Attempted path \"/etc/a.txt\" resolves outside the allowed workspace directories: /w"}}"#;
const WRITE_POLICY: &str = r#"{"type":"tool_result","timestamp":"…","tool_id":"write_file__1","status":"error","output":"denied","error":{"type":"policy_violation","message":"Tool execution denied by policy. You are in Plan Mode and cannot modify source code."}}"#;
const ANSWER: &str =
    r#"{"type":"message","timestamp":"…","role":"assistant","content":"Done.","delta":true}"#;
const SUCCESS: &str = r#"{"type":"result","timestamp":"…","status":"success","stats":{"total_tokens":2080,"input_tokens":2040,"output_tokens":40,"cached":1000,"input":1040,"duration_ms":169,"tool_calls":1}}"#;
const ERROR_401: &str = r#"{"type":"result","timestamp":"…","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":401,\"message\":\"fake server forced HTTP 401\",\"status\":\"UNAUTHENTICATED\"}}]"},"stats":{"total_tokens":0}}"#;
const ERROR_500: &str = r#"{"type":"result","timestamp":"…","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":500,\"message\":\"fake server forced HTTP 500\",\"status\":\"INTERNAL\"}}]"}}"#;
const INVALID_STREAM: &str = r#"{"type":"error","timestamp":"…","severity":"error","message":"Invalid stream: The model returned an empty response or malformed tool call."}"#;
const BARE_ERROR_RESULT: &str =
    r#"{"type":"result","timestamp":"…","status":"error","stats":{"total_tokens":0}}"#;
const LOOP_WARNING: &str = r#"{"type":"error","timestamp":"…","severity":"warning","message":"Loop detected, stopping execution"}"#;

fn judge(lines: &[&str], exit: AgentExit) -> Verdict {
    let gemini = adapter("gemini").unwrap();
    gemini.verdict(&summary_of(gemini, lines), exit)
}

#[test]
fn a_successful_result_with_exit_zero_is_done_even_after_a_warning_and_a_failed_tool() {
    let run = [
        INIT,
        USER,
        WRITE,
        WRITE_FAILED,
        LOOP_WARNING,
        ANSWER,
        SUCCESS,
    ];
    assert_eq!(judge(&run, AgentExit::Code(0)), Verdict::done());
    let summary = summary_of(adapter("gemini").unwrap(), &run);
    assert_eq!((summary.tool_calls, summary.tool_errors), (1, 1));
    assert_eq!(
        (summary.tokens.input, summary.tokens.cache_read),
        (1040, 1000)
    );
    assert_eq!(summary.error_count, 0);
}

/// Issue 14: Gemini's own guard refusing a call fails the round as the other agents' refusals
/// do, naming the tool and the reason; the recorded stream is 0.61.0 writing to the main
/// checkout from a task's worktree.
#[test]
fn a_call_refused_by_gemini_s_guard_fails_the_round() {
    assert_eq!(
        judge(
            &[INIT, USER, WRITE, WRITE_OUTSIDE, ANSWER, SUCCESS],
            AgentExit::Code(0)
        ),
        Verdict::failed(
            "a tool call was refused by Gemini CLI's permissions: write_file: Path not in workspace: Attempted path \"/etc/a.txt\" resolves outside the allowed workspace directories: /w"
        )
    );
    assert_eq!(
        judge(
            &[INIT, USER, WRITE, WRITE_POLICY, ANSWER, SUCCESS],
            AgentExit::Code(0)
        ),
        Verdict::failed(
            "a tool call was refused by Gemini CLI's permissions: write_file: Tool execution denied by policy. You are in Plan Mode and cannot modify source code."
        )
    );
    let gemini = adapter("gemini").unwrap();
    let recorded = common::recorded::recorded("gemini")
        .into_iter()
        .find(|(name, _)| name == "gemini-perm-outside")
        .unwrap()
        .1;
    let summary = ganger_agents::summarize_stream(gemini.stream_parser().as_mut(), &recorded);
    // In ganger's sandbox Gemini's workspace check (which cannot step aside) stands for the
    // sandbox, which would have stopped the write anyway: listed, not a failure.
    assert_eq!(
        gemini.round_verdict(
            &summary,
            AgentExit::Code(0),
            ganger_agents::Permission::Write,
            true
        ),
        Verdict::done()
    );
    assert_eq!(
        gemini.verdict(&summary, AgentExit::Code(0)),
        Verdict::failed(
            "a tool call was refused by Gemini CLI's permissions: write_file: Path not in workspace: Attempted path \"/home/dev/main/refused.txt\" resolves outside the allowed workspace directories: /home/dev/project or the project temp directory: /home/dev/.gemini/tmp/repo-agent-out"
        )
    );
}

#[test]
fn every_failure_names_its_cause() {
    let cases: [(&[&str], AgentExit, &str); 8] = [
        (
            &[INIT, USER, ERROR_401],
            AgentExit::Code(145),
            "Gemini reported an error: APIError (HTTP 401): fake server forced HTTP 401 (UNAUTHENTICATED)",
        ),
        (
            &[INIT, USER, ERROR_500],
            AgentExit::Code(244),
            "Gemini reported an error: APIError (HTTP 500): fake server forced HTTP 500 (INTERNAL)",
        ),
        (
            &[INIT, USER, INVALID_STREAM, BARE_ERROR_RESULT],
            AgentExit::Code(0),
            "Gemini reported an error: Error: Invalid stream: The model returned an empty response or malformed tool call.",
        ),
        (
            &[INIT, USER, BARE_ERROR_RESULT],
            AgentExit::Code(1),
            "Gemini reported an error: Error: Gemini ended the run with status \"error\"",
        ),
        (
            &[INIT, USER, WRITE],
            AgentExit::Code(145),
            "the stream ended without a result (Gemini exited with code 145: Gemini exits with the HTTP status of a failed API call modulo 256, so probably HTTP 401)",
        ),
        (
            &[],
            AgentExit::Code(41),
            "the stream ended without a result (Gemini exited with code 41: an authentication error (is the auth type selected?))",
        ),
        (
            &[INIT, USER, ANSWER],
            AgentExit::Signal(15),
            "the stream ended without a result (Gemini was killed by signal 15 (SIGTERM))",
        ),
        (
            &[INIT, USER, ANSWER, SUCCESS],
            AgentExit::Code(1),
            "Gemini exited with code 1 after a successful result",
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
