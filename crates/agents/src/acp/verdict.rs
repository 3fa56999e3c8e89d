//! Whether a warm round is done: the turn ended with `end_turn`, no error was reported, and
//! no tool call was refused (by ganger's permissions or the agent's own). A turn that ended
//! any other way (`cancelled`, `max_tokens`, `max_turn_requests`, `refusal`) failed, and says
//! how; a stream that ended without the prompt's answer means the warm agent went away.

use crate::{AgentExit, Verdict};
use ganger_events::RoundSummary;

/// The stop reason of a turn that finished its work.
pub const END_TURN: &str = "end_turn";

/// Whether the warm round whose stream folded into `summary` is done. `exit` is how the turn
/// ended for the round host: `Code(0)` when the stream was whole. In a `guarded` round
/// (read-only) a refused call is the guard doing what was asked, and the round is judged on
/// the rest, unless the agent ended its turn at the refusal without an answer.
pub fn verdict(summary: &RoundSummary, exit: AgentExit, guarded: bool) -> Verdict {
    guarded_verdict(summary, exit, guarded, turn_verdict)
}

/// `judge`'s verdict, except that in a `guarded` round refused calls are left out of what it
/// sees, and a turn that ended at a refusal without an answer failed.
pub fn guarded_verdict(
    summary: &RoundSummary,
    exit: AgentExit,
    guarded: bool,
    judge: impl Fn(&RoundSummary, AgentExit) -> Verdict,
) -> Verdict {
    if guarded && summary.rejection_count > 0 {
        if summary.answer.is_none() && summary.ended {
            return Verdict::failed(format!(
                "a tool call was refused (read-only) and the agent ended its turn there, without an answer: {}",
                summary.rejections.first().map_or("", String::as_str)
            ));
        }
        let judged = RoundSummary {
            rejections: Vec::new(),
            rejection_count: 0,
            ..summary.clone()
        };
        return judge(&judged, exit);
    }
    judge(summary, exit)
}

/// `summary` with the refusals of the agent's own guard taken as the tool errors they stand
/// for (ganger's own refusals, `refused by ganger (RULE)`, stay refusals): in ganger's sandbox
/// the sandbox is the boundary, and a guard's refusal counts as the sandbox's would (a write
/// it stops fails the tool), as in a cold round there. The report still lists them all.
pub fn without_own_guards(summary: &RoundSummary) -> RoundSummary {
    let (ganger, guards): (Vec<String>, Vec<String>) = summary
        .rejections
        .iter()
        .cloned()
        .partition(|refusal| refusal.contains(crate::acp::BY_GANGER));
    let guards = guards.len() as u64;
    RoundSummary {
        rejections: ganger,
        rejection_count: summary.rejection_count.saturating_sub(guards),
        tool_errors: summary.tool_errors + guards,
        ..summary.clone()
    }
}

/// An ACP turn's verdict.
fn turn_verdict(summary: &RoundSummary, exit: AgentExit) -> Verdict {
    if let Some(first) = summary.errors.first() {
        return Verdict::failed(format!("the agent reported an error: {first}"));
    }
    if let Some(first) = summary.rejections.first() {
        let more = match summary.rejection_count {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        // ganger's refusals say so (`refused by ganger (RULE)`); the others are the agent's.
        let by = if first.contains(super::stream::BY_GANGER) {
            "ganger's permissions"
        } else {
            "the agent's own guard"
        };
        return Verdict::failed(format!("a tool call was refused by {by}: {first}{more}"));
    }
    match summary.finish.as_deref() {
        Some(END_TURN) if summary.ended && exit == AgentExit::Code(0) => Verdict::done(),
        Some(END_TURN) if summary.ended => {
            Verdict::failed(format!("the warm agent {exit} after its turn"))
        }
        Some(reason) if summary.ended => {
            Verdict::failed(format!("the agent's turn ended with {reason}"))
        }
        _ => Verdict::failed("the warm agent's turn ended without an answer (the agent went away)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_ended_turn_without_errors_or_refusals_is_done() {
        let ended = RoundSummary {
            finish: Some(END_TURN.into()),
            ended: true,
            ..Default::default()
        };
        assert!(verdict(&ended, AgentExit::Code(0), false).done);
        let cancelled = RoundSummary {
            finish: Some("cancelled".into()),
            ..ended.clone()
        };
        assert_eq!(
            verdict(&cancelled, AgentExit::Code(0), false)
                .reason
                .as_deref(),
            Some("the agent's turn ended with cancelled")
        );
        let refused = RoundSummary {
            rejections: vec!["bash: refused by ganger (read-only round)".into()],
            rejection_count: 1,
            ..ended.clone()
        };
        let by_ganger = verdict(&refused, AgentExit::Code(0), false);
        assert!(!by_ganger.done);
        assert_eq!(
            by_ganger.reason.as_deref(),
            Some(
                "a tool call was refused by ganger's permissions: bash: refused by ganger (read-only round)"
            )
        );
        let by_agent = RoundSummary {
            rejections: vec!["write_file: Path not in workspace: /elsewhere".into()],
            ..refused.clone()
        };
        assert_eq!(
            verdict(&by_agent, AgentExit::Code(0), false)
                .reason
                .as_deref(),
            Some(
                "a tool call was refused by the agent's own guard: write_file: Path not in workspace: /elsewhere"
            )
        );
        let answered = RoundSummary {
            answer: Some("Here it is.".into()),
            ..refused.clone()
        };
        assert!(verdict(&answered, AgentExit::Code(0), true).done);
        assert!(
            !verdict(&refused, AgentExit::Code(0), true).done,
            "no answer"
        );
        assert!(!verdict(&RoundSummary::default(), AgentExit::Code(0), false).done);
    }
}
