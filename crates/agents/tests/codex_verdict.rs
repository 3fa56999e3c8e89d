//! Codex's success test: which rounds are done, and the one reason given when not.
#![cfg(test)]

use crate::common;

use common::recorded::summary_of;
use ganger_agents::{AgentExit, Verdict, adapter};

const THREAD: &str =
    r#"{"type":"thread.started","thread_id":"01a22a2b-67b8-77a2-96ca-86d53b483964"}"#;
const TURN: &str = r#"{"type":"turn.started"}"#;
const PATCH: &str = r#"{"type":"item.completed","item":{"id":"item_0","type":"file_change","changes":[{"path":"/w/a.txt","kind":"add"}],"status":"completed"}}"#;
const FAILED_COMMAND: &str = r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}"#;
const MESSAGE: &str =
    r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}"#;
const METADATA_NOTICE: &str = r#"{"type":"item.completed","item":{"id":"item_3","type":"error","message":"Model metadata for `gpt-fake` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}"#;
const COMPLETED: &str = r#"{"type":"turn.completed","usage":{"input_tokens":2100,"cached_input_tokens":400,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":10}}"#;
const RECONNECT_500: &str = r#"{"type":"error","message":"Reconnecting... 1/5 (We’re currently experiencing high demand, which may cause temporary errors.)"}"#;
const ERROR_500: &str = r#"{"type":"error","message":"We’re currently experiencing high demand, which may cause temporary errors."}"#;
const FAILED_500: &str = r#"{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}"#;
const RECONNECT_401: &str = r#"{"type":"error","message":"Reconnecting... 1/1 (unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses)"}"#;
const FAILED_401: &str = r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses"}}"#;
const REFUSED: &str = r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#;

fn judge(lines: &[&str], exit: AgentExit) -> Verdict {
    let codex = adapter("codex").unwrap();
    codex.verdict(&summary_of(codex, lines), exit)
}

#[test]
fn a_completed_turn_with_exit_zero_is_done_even_after_notices_and_a_failed_command() {
    let run = [
        THREAD,
        TURN,
        METADATA_NOTICE,
        RECONNECT_500,
        PATCH,
        FAILED_COMMAND,
        MESSAGE,
        COMPLETED,
    ];
    assert_eq!(judge(&run, AgentExit::Code(0)), Verdict::done());
    let summary = summary_of(adapter("codex").unwrap(), &run);
    assert_eq!((summary.tool_calls, summary.tool_errors), (2, 1));
    assert_eq!(summary.error_count, 0);
    assert_eq!(summary.answer.as_deref(), Some("Done."));
}

#[test]
fn every_failure_names_its_cause() {
    let cases: [(&[&str], AgentExit, &str); 7] = [
        (
            &[THREAD, TURN, RECONNECT_401, FAILED_401],
            AgentExit::Code(1),
            "Codex's turn failed: APIError (HTTP 401): unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses",
        ),
        (
            &[THREAD, TURN, RECONNECT_500, ERROR_500, FAILED_500],
            AgentExit::Code(1),
            "Codex's turn failed: TurnFailed: We’re currently experiencing high demand, which may cause temporary errors.",
        ),
        (
            &[THREAD, TURN, REFUSED, REFUSED, REFUSED],
            AgentExit::Signal(9),
            "Codex never completed its turn (was killed by signal 9 (SIGKILL)); its last notice was: Reconnecting... waiting for network (Connection failed: error sending request)",
        ),
        (
            &[THREAD, TURN, PATCH],
            AgentExit::Code(0),
            "the stream ended without turn.completed (Codex exited with code 0)",
        ),
        (
            &[THREAD, TURN, PATCH, MESSAGE],
            AgentExit::Code(3),
            "the stream ended without turn.completed (Codex exited with code 3)",
        ),
        (
            &[],
            AgentExit::Code(1),
            "the stream ended without turn.completed (Codex exited with code 1)",
        ),
        (
            &[THREAD, TURN, MESSAGE, COMPLETED],
            AgentExit::Code(1),
            "Codex exited with code 1 after completing its turn",
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

#[test]
fn a_turn_started_after_a_completed_one_is_not_done() {
    let lines = [THREAD, TURN, MESSAGE, COMPLETED, TURN];
    assert!(!judge(&lines, AgentExit::Code(0)).done);
}

/// Issue 14: Codex refuses a patch outside the project with no JSON item, only a stderr log
/// line (measured with 0.171.0); the round was done with nothing written. The adapter reads
/// the line as a refusal, and the round fails as the other agents' do.
#[test]
fn a_patch_refused_by_codex_s_approval_settings_fails_the_round() {
    let codex = adapter("codex").unwrap();
    let stderr = b"2026-12-01T14:36:17.101351Z ERROR codex_core::tools::router: error=patch rejected: writing outside of the project; rejected by user approval settings\n";
    let mut summary = summary_of(codex, &[THREAD, TURN, MESSAGE, COMPLETED]);
    assert_eq!(codex.verdict(&summary, AgentExit::Code(0)), Verdict::done());
    let event = codex.stderr_event(stderr).expect("a refusal");
    summary.apply(&event);
    assert_eq!(
        codex.verdict(&summary, AgentExit::Code(0)),
        Verdict::failed(
            "a tool call was refused by Codex's permissions: apply_patch: writing outside of the project (rejected by Codex's approval settings)"
        )
    );
    // Other adapters read nothing from stderr.
    for name in ["opencode", "claude", "gemini", "qwen"] {
        assert_eq!(adapter(name).unwrap().stderr_event(stderr), None, "{name}");
    }
}
