//! Whether a Gemini CLI round is done: a `result` of status `success` was seen, no tool call
//! was refused by Gemini's own guard (a policy, a path outside the workspace: the model is
//! told and carries on, but the agent was kept from part of the work, as with the other
//! agents), and the process exited 0 (or lingered after it and was stopped, reported as 0).
//! An `error` line of severity `error` followed by a successful result does not fail the
//! round: Gemini went on and finished.
//!
//! Otherwise the reason is the real cause: the first error Gemini reported (an API error with
//! its HTTP status and message); else a stream without a final `result`, with the exit code
//! explained. Gemini exits with the HTTP status of a failed API call modulo 256 (401 → 145,
//! 500 → 244), and with its own codes for fatal errors before the run (41: authentication,
//! 42: input, 44: sandbox, 52: configuration, 53: turn limit, 54: tool, 55: untrusted folder).

use crate::gemini::normalize::SUCCESS;
use crate::outcome::more;
use crate::{AgentExit, Verdict};
use ganger_events::RoundSummary;

/// Whether the round whose stream folded into `summary` and whose process ended with `exit`
/// is done, and if not, why.
pub fn verdict(summary: &RoundSummary, exit: AgentExit) -> Verdict {
    let succeeded = summary.finish.as_deref() == Some(SUCCESS);
    if !succeeded && let Some(first) = summary.errors.first() {
        return Verdict::failed(format!("Gemini reported an error: {first}"));
    }
    if let Some(first) = summary.rejections.first() {
        return Verdict::failed(format!(
            "a tool call was refused by Gemini CLI's permissions: {first}{}",
            more(summary.rejection_count, "refusal")
        ));
    }
    if succeeded && exit == AgentExit::Code(0) {
        return Verdict::done();
    }
    if succeeded {
        return Verdict::failed(format!("Gemini {} after a successful result", how(exit)));
    }
    let what = if summary.ended {
        "Gemini ended the run without success"
    } else {
        "the stream ended without a result"
    };
    Verdict::failed(format!("{what} (Gemini {})", how(exit)))
}

/// "exited with code 145, …", "was killed by signal 9 (SIGKILL)".
fn how(exit: AgentExit) -> String {
    if let AgentExit::Code(code) = exit
        && let Some(meaning) = meaning(code)
    {
        return format!("{exit}: {meaning}");
    }
    exit.said()
}

/// What a Gemini exit code means.
fn meaning(code: i32) -> Option<String> {
    Some(match code {
        41 => "an authentication error (is the auth type selected?)".to_owned(),
        42 => "an input error".to_owned(),
        44 => "a sandbox error".to_owned(),
        52 => "a configuration error".to_owned(),
        53 => "the session's turn limit was reached".to_owned(),
        54 => "a tool execution error".to_owned(),
        55 => "the folder is not trusted".to_owned(),
        code if (144..=255).contains(&code) => format!(
            "Gemini exits with the HTTP status of a failed API call modulo 256, so probably HTTP {}",
            code + 256
        ),
        _ => return None,
    })
}
