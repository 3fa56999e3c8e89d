//! Whether a Claude Code or Qwen Code round is done, from its summary and how the process
//! ended (FACTS.md §6).
//!
//! A round is done only when all of these hold, and the reason names the first that fails:
//!
//! 1. no error was reported (an API error explains the exit code that follows it);
//! 2. no tool call was refused by a permission (a `permission_denied` line, or the result's
//!    `permission_denials`): the model is told and carries on, but the agent was kept from
//!    something it judged part of the work, so the round fails naming the tool and the reason,
//!    as an OpenCode round does (docs/design.md, "Refused tool calls");
//! 3. the stream reached its `result` line ([`Event::Ended`](ganger_events::Event::Ended));
//! 4. the process exited with code 0 (a lingering CLI stopped after its result counts as 0).

use crate::outcome::{first_error, first_refusal, more};
use crate::stream_json::Dialect;
use crate::{AgentExit, Verdict};
use ganger_events::RoundSummary;

/// Whether the round whose stream folded into `summary` and whose process ended with `exit`
/// is done, and if not, why.
pub fn verdict(dialect: Dialect, summary: &RoundSummary, exit: AgentExit) -> Verdict {
    let name = dialect.display_name();
    if summary.error_count > 0 {
        let first = first_error(summary);
        return Verdict::failed(format!(
            "{name} reported an error: {first}{}",
            more(summary.error_count, "error")
        ));
    }
    if summary.rejection_count > 0 {
        let first = first_refusal(summary);
        return Verdict::failed(format!(
            "a tool call was refused by {name}'s permissions: {first}{}",
            more(summary.rejection_count, "refusal")
        ));
    }
    if !summary.ended {
        let retries = match summary.retries {
            0 => String::new(),
            1 => " after 1 retry notice".to_owned(),
            count => format!(" after {count} retry notices"),
        };
        return Verdict::failed(format!(
            "the stream ended without a result line{retries} ({exit})"
        ));
    }
    if exit.success() {
        Verdict::done()
    } else {
        Verdict::failed(format!("{name} {} after reporting success", exit.said()))
    }
}
