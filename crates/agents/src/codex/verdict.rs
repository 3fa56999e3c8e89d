//! Whether a Codex round is done: a `turn.completed` was seen, no `turn.failed`, no call was
//! refused by Codex's approval settings (reported on stderr: [`super::stderr_event`]), and
//! the process exited 0 (or lingered after its last event and was stopped, which the engine
//! reports as 0). Otherwise the reason is the real cause, in this order: the failed turn's
//! message; a refused call; a turn that never completed, with Codex's last connection notice
//! when it printed one (a Codex that cannot reach its server reconnects forever until it is
//! stopped); then the exit code.

use crate::outcome::{first_error, more};
use crate::{AgentExit, Verdict};
use ganger_events::RoundSummary;

/// Whether the round whose stream folded into `summary` and whose process ended with `exit`
/// is done, and if not, why.
pub fn verdict(summary: &RoundSummary, exit: AgentExit) -> Verdict {
    if summary.error_count > 0 {
        let first = first_error(summary);
        return Verdict::failed(format!("Codex's turn failed: {first}"));
    }
    if let Some(first) = summary.rejections.first() {
        return Verdict::failed(format!(
            "a tool call was refused by Codex's permissions: {first}{}",
            more(summary.rejection_count, "refusal")
        ));
    }
    let how = exit.said();
    if !summary.finished_last_step() {
        return Verdict::failed(match &summary.last_retry {
            Some(notice) => {
                format!("Codex never completed its turn ({how}); its last notice was: {notice}")
            }
            None => format!("the stream ended without turn.completed (Codex {how})"),
        });
    }
    if exit.success() {
        Verdict::done()
    } else {
        Verdict::failed(format!("Codex {how} after completing its turn"))
    }
}
