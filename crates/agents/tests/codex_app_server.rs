//! Codex kept warm: recorded `codex app-server` sessions (0.171.0 against the scripted model,
//! `tests/fixtures/codex-app-server`) read turn by turn as the warm host reads them, their
//! translation judged by Codex's cold reader and verdict as a warm round is.
#![cfg(test)]

use ganger_agents::app_server::{Then, TurnReader};
use ganger_agents::{AgentExit, adapter, scan, summarize_stream};
use ganger_events::RoundSummary;
use serde_json::{Value, json};
use std::path::PathBuf;

/// One turn as the host saw it: its stream for the round, and the questions Codex asked.
struct Turn {
    stream: Vec<u8>,
    asked: Vec<ganger_agents::acp::protocol::PermissionAsk>,
    sent: Vec<Value>,
}

/// Reads a recorded session: the thread is `thread/start`'s answer (request 2), and turn `k`
/// is request `3 + k`; each ask is denied, as ganger's policy line says in the stream.
fn turns(name: &str) -> Vec<Turn> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex-app-server")
        .join(name);
    let data = std::fs::read(&path).unwrap();
    let mut lines = scan::lines(&data);
    let thread = lines
        .by_ref()
        .find_map(|line| {
            let value: Value = serde_json::from_slice(line).ok()?;
            (value["id"] == 2)
                .then(|| value["result"]["thread"]["id"].as_str().map(str::to_owned))?
        })
        .unwrap();
    let mut turns = Vec::new();
    let mut reader = TurnReader::new(&thread, 3);
    let mut turn = Turn {
        stream: Vec::new(),
        asked: Vec::new(),
        sent: Vec::new(),
    };
    for line in lines {
        let seen = reader.see(line);
        for out in seen.stream {
            turn.stream.extend(out.to_string().as_bytes());
            turn.stream.push(b'\n');
        }
        match seen.then {
            Then::Nothing => {}
            Then::Ask { ask, .. } => {
                let denial = json!({"ganger": "permission", "tool": ask.tool, "decision": "deny",
                    "rule": "a test denies everything"});
                turn.stream.extend(denial.to_string().as_bytes());
                turn.stream.push(b'\n');
                turn.asked.push(ask);
            }
            Then::Send(message) => turn.sent.push(message),
            Then::Ended => {
                turns.push(std::mem::replace(
                    &mut turn,
                    Turn {
                        stream: Vec::new(),
                        asked: Vec::new(),
                        sent: Vec::new(),
                    },
                ));
                reader = TurnReader::new(&thread, 3 + turns.len() as u64);
            }
        }
    }
    turns
}

fn summary(turn: &Turn) -> RoundSummary {
    let codex = adapter("codex").unwrap();
    summarize_stream(&mut *codex.warm_stream_parser(), &turn.stream)
}

fn verdict(summary: &RoundSummary, guarded: bool) -> ganger_agents::Verdict {
    adapter("codex").unwrap().warm_verdict(
        summary,
        AgentExit::Code(0),
        if guarded {
            ganger_agents::Permission::ReadOnly
        } else {
            ganger_agents::Permission::Write
        },
        false,
    )
}

#[test]
fn two_turns_read_as_two_cold_rounds_of_one_thread() {
    let turns = turns("two-turns.jsonl");
    assert_eq!(turns.len(), 2);
    let (first, second) = (summary(&turns[0]), summary(&turns[1]));
    assert_eq!(
        first.session.as_deref(),
        Some("01a2338e-a5a5-7280-ad13-1279aa9f8957")
    );
    assert_eq!(second.session, first.session);
    assert!(
        first
            .answer
            .as_deref()
            .is_some_and(|a| a.starts_with("Done round 1.")),
        "{first:?}"
    );
    // Round 1 patched a file; round 2 ran a command.
    assert_eq!((first.tool_calls, first.tool_errors), (1, 0), "{first:?}");
    assert_eq!(
        (second.tool_calls, second.tool_errors),
        (1, 0),
        "{second:?}"
    );
    // The thread's totals, as `exec --json` gives them (the round's own are the engine's
    // difference with the round before): round 1 made two requests, round 2 two more.
    assert_eq!(
        (first.tokens.input, first.tokens.output),
        (13850, 43),
        "{first:?}"
    );
    assert_eq!(
        (second.tokens.input, second.tokens.output),
        (27807, 81),
        "{second:?}"
    );
    assert!(first.ended && second.ended);
    assert!(verdict(&first, false).done, "{:?}", verdict(&first, false));
    assert!(verdict(&second, false).done);
}

#[test]
fn a_denied_patch_and_command_are_refusals_with_what_they_would_touch() {
    let turns = turns("declined.jsonl");
    assert_eq!(turns.len(), 2);
    let patch = &turns[0].asked;
    assert_eq!(patch.len(), 1);
    assert_eq!(patch[0].kind.as_deref(), Some("edit"));
    // The approval names only its item: the path comes from the item seen starting before.
    assert_eq!(patch[0].paths, ["/repo/outside-a.txt"]);
    let command = &turns[1].asked;
    assert_eq!(command[0].kind.as_deref(), Some("execute"));
    // The command inside Codex's shell wrapper, which `[permissions]` patterns match.
    assert_eq!(command[0].input["command"], "git push origin main");
    for turn in &turns {
        let summary = summary(turn);
        assert_eq!(summary.rejection_count, 1, "{summary:?}");
        // A refused call fails a round that may write, as cold...
        assert!(!verdict(&summary, false).done);
        // ...and not a read-only one, where refusing is what was asked.
        assert!(verdict(&summary, true).done, "{summary:?}");
    }
}

#[test]
fn a_failed_turn_fails_with_the_models_error() {
    let turns = turns("failed.jsonl");
    let failed = summary(&turns[0]);
    let verdict = verdict(&failed, false);
    assert!(!verdict.done);
    assert!(
        verdict
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("unexpected status 401")),
        "{verdict:?}"
    );
    // Codex's retry notice is not progress, as cold.
    assert!(failed.last_retry.is_some(), "{failed:?}");
    // The turn after it, on the same thread, is done.
    assert!(self::verdict(&summary(&turns[1]), false).done);
}

#[test]
fn a_cancel_before_the_turn_is_named_goes_when_it_is() {
    let mut reader = TurnReader::new("t-1", 7);
    assert_eq!(reader.interrupt(9), None);
    let seen = reader.see(br#"{"id":7,"result":{"turn":{"id":"turn-1","status":"inProgress"}}}"#);
    assert_eq!(
        seen.then,
        Then::Send(
            json!({"id": 9, "method": "turn/interrupt", "params": {"threadId": "t-1", "turnId": "turn-1"}})
        )
    );
    // Named now: a second cancel goes at once.
    assert!(reader.interrupt(10).is_some());
}
