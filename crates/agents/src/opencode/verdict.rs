//! Whether an OpenCode round is done, from its summary and how the process ended.
//!
//! OpenCode's exit code alone says little: an `ask` permission auto-rejected by `opencode run`
//! stops the run with exit 0, and a run can end with exit 0 after a step that never finished.
//! So a round is done only when all of these hold:
//!
//! 1. no `error` line (OpenCode prints one when the session failed);
//! 2. no tool call refused by a permission rule;
//! 3. the process exited with code 0;
//! 4. it printed at least one event (a well-formed line);
//! 5. the last step finished: a `step_finish` came after the last `step_start`.
//!
//! When several fail, the reason names the first in this order, the one closest to the real
//! cause: an API error explains the exit code 1 that follows it, not the other way round.

use crate::opencode::normalize::is_deny_refusal;
use crate::outcome::{first_error, first_refusal, more};
use crate::{AgentExit, Verdict};
use ganger_events::RoundSummary;

/// Whether the round whose stream folded into `summary` and whose process ended with `exit`
/// is done, and if not, why.
pub fn verdict(summary: &RoundSummary, exit: AgentExit) -> Verdict {
    if summary.error_count > 0 {
        let first = first_error(summary);
        return Verdict::failed(format!(
            "OpenCode reported an error: {first}{}",
            more(summary.error_count, "error")
        ));
    }
    if summary.rejection_count > 0 {
        let first = first_refusal(summary);
        let how = if is_deny_refusal(first) {
            "a permission set to deny"
        } else {
            "a permission set to ask, auto-rejected in a headless run"
        };
        return Verdict::failed(format!(
            "a tool call was refused by OpenCode's permissions ({how}): {first}{}",
            more(summary.rejection_count, "refusal")
        ));
    }
    if !exit.success() {
        return Verdict::failed(format!("OpenCode {}", exit.said()));
    }
    let events = summary.lines - summary.malformed;
    if events == 0 {
        return Verdict::failed(match summary.malformed {
            0 => "OpenCode exited 0 without printing any event".to_owned(),
            lines => format!(
                "OpenCode exited 0 without printing any event ({lines} {} not JSON events)",
                if lines == 1 { "line was" } else { "lines were" }
            ),
        });
    }
    if !summary.finished_last_step() {
        return Verdict::failed(if summary.steps_finished == 0 {
            "OpenCode never finished a step (no step_finish)"
        } else {
            "the last step never finished (no step_finish after the last step_start)"
        });
    }
    Verdict::done()
}
