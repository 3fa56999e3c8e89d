//! `--until-green N`: while the last round's checks fail, the failures (each check's command
//! and the end of its output) go back to the agent as the next fix round in the same session,
//! at most N times; then it stops and says so. The loop runs wherever the first round ran: in
//! the command in the foreground, in the detached host with `--detach`.

use crate::base::brief::Brief;
use crate::base::error::Result;
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::evidence::checks::fix_prompt;
use crate::round::HostOutcome;
use crate::round::launch::Launched;
use crate::task::fix_round::{FixOptions, send_fix_round};
use crate::task::rules::take_loop_claim;

/// Runs fix rounds after `outcome` while its checks fail, at most `limit` of them; returns
/// the last round's outcome. The caller holds the task's loop lock.
pub(crate) fn until_green(
    ws: &Workspace,
    mut outcome: HostOutcome,
    limit: u32,
    notices: &mut dyn Notices,
) -> Result<HostOutcome> {
    let mut sent = 0;
    loop {
        let failed: Vec<String> = outcome
            .round
            .failed_checks()
            .map(|c| c.name.clone())
            .collect();
        // Only a round the agent finished has run its checks; any other end is not the
        // checks' to fix (a failed agent, a cancel, a timeout).
        if failed.is_empty() {
            return Ok(outcome);
        }
        if sent == limit {
            notices.notice(Notice::UntilGreenGaveUp {
                slug: outcome.task.slug.clone(),
                rounds: sent,
                failed,
            });
            return Ok(outcome);
        }
        if let Some(why) = ws
            .existing_store()?
            .and_then(|store| crate::evidence::budget::exhausted(&*store, &outcome.task))
        {
            notices.notice(Notice::BudgetSpent {
                slug: outcome.task.slug.clone(),
                why,
            });
            return Ok(outcome);
        }
        sent += 1;
        notices.notice(Notice::ChecksSentBack {
            slug: outcome.task.slug.clone(),
            number: outcome.round.number,
            attempt: sent,
            limit,
            failed,
        });
        let options = FixOptions {
            slug: outcome.task.slug.clone(),
            brief: Some(Brief::Message(fix_prompt(&outcome.round))),
            checks: crate::evidence::checks::one_off(&ws.config, &outcome.round.checks),
            commander: Some(outcome.round.commander.clone()),
            ..FixOptions::default()
        };
        outcome = match send_fix_round(ws, options, None, notices)? {
            Launched::Finished(outcome) => outcome,
            // Not asked for: the loop's rounds run where it runs.
            Launched::Detached { .. } => return Ok(outcome),
        };
    }
}

/// `until_green` after a launched round that ran here; a detached one carries the limit to
/// its host.
pub(crate) fn after_launch(
    ws: &Workspace,
    launched: Launched,
    limit: Option<u32>,
    notices: &mut dyn Notices,
) -> Result<Launched> {
    match (launched, limit) {
        (Launched::Finished(outcome), Some(limit)) => {
            let held = take_loop_claim(&*ws.open_store()?, &outcome.task.slug)?;
            let last = until_green(ws, outcome, limit, notices);
            held.release();
            Ok(Launched::Finished(last?))
        }
        (launched, _) => Ok(launched),
    }
}
