//! The host's loop around a running agent (a cold round's process, or a warm round's turn):
//! it waits for the end, enforces the wall-clock and stall limits and the budgets, stores
//! the summary as it grows, and stops the agent on a cancel or a signal.

use super::finish::{HostStop, cancel_requested, stop_for_signal};
use super::output::Progress;
use super::setup::RoundInput;
use super::signals::SignalWatch;
use super::watchdog::{Limit, Watchdog};
use crate::base::redact::Redactor;
use crate::evidence::budget::{BudgetWatch, RoundSpend};
use ganger_agents::AgentExit;
use ganger_sandbox::{Activity, RunningAgent, Waited};
use ganger_store::{Claim, Store, now_ms};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a running round's summary is written to the store.
const STORE_EVERY: Duration = Duration::from_millis(500);
/// How often the store is asked whether a cancel was requested (a cancel also signals).
const CANCEL_POLL: Duration = Duration::from_secs(1);

/// How the host counts a running round's spending: the figures it stores, and the budgets
/// they are held to.
pub(super) struct Spending {
    pub settle: RoundSpend,
    pub budget: BudgetWatch,
}

/// Waits for the agent, enforcing the limits, the budgets and stop requests; returns how it
/// ended and why the host stopped it, if it did.
#[expect(
    clippy::too_many_arguments,
    reason = "the host's loop state, each part owned elsewhere"
)]
pub(super) fn follow(
    store: &mut dyn Store,
    input: &RoundInput,
    claim: &Claim,
    agent: &mut dyn Followed,
    signals: &SignalWatch,
    progress: &Arc<Mutex<Progress>>,
    started: Instant,
    linger: Option<Duration>,
    mut spending: Spending,
    redactor: &Redactor,
) -> (AgentExit, Option<HostStop>) {
    let mut watchdog = Watchdog::new(started, input.timeout, input.stall);
    let mut last_store = started;
    let mut last_cancel_poll = started;
    let mut ended_at: Option<Instant> = None;
    loop {
        let tick = match (linger, ended_at) {
            (Some(_), None) => Duration::from_millis(50),
            _ => Duration::from_millis(250),
        };
        let stop = match agent.wait_timeout(tick, Some(signals.fd())) {
            Waited::Exited(exit) => return (convert(exit), None),
            Waited::Woken => signals
                .received()
                .map(|signal| stop_for_signal(store, input, signal)),
            Waited::TimedOut => None,
        };
        let now = Instant::now();
        let stop = stop.or_else(|| {
            if now.duration_since(last_cancel_poll) >= CANCEL_POLL {
                last_cancel_poll = now;
                if cancel_requested(store, input) {
                    return Some(HostStop::Cancelled);
                }
            }
            // The round is no longer this host's (its lease ran out unrenewed and the store
            // refuses its writes): its agent stops rather than work on for nobody.
            if claim.lost() {
                return Some(HostStop::ClaimLost);
            }
            let (stream_progress, retrying, snapshot) = {
                let mut shared = match progress.lock() {
                    Ok(shared) => shared,
                    Err(poisoned) => poisoned.into_inner(),
                };
                if shared.summary.ended && ended_at.is_none() {
                    ended_at = Some(now);
                }
                let snapshot = (shared.dirty && now.duration_since(last_store) >= STORE_EVERY)
                    .then(|| {
                        shared.dirty = false;
                        shared.summary.clone()
                    });
                (shared.last_progress, shared.retrying, snapshot)
            };
            let last_seen = stream_progress.max(watchdog.last_active());
            if let Some(mut summary) = snapshot {
                redactor.redact_summary(&mut summary);
                last_store = now;
                let at = now_ms()
                    - i64::try_from(now.duration_since(last_seen).as_millis()).unwrap_or(0);
                let settled = spending.settle.settle(&*store, &summary);
                let _ = store.record_progress(input.round.id, &settled, at);
                // An agent that printed its last event has nothing more to spend: its round
                // ends as it would have, and the next one is refused.
                let finished = settled.ended || settled.finish.as_deref() == Some("stop");
                if spending.budget.is_set()
                    && !finished
                    && let Some(why) = spending.budget.check(&*store, &settled)
                {
                    return Some(HostStop::Budget(why));
                }
            }
            watchdog
                .check(now, stream_progress, retrying, || agent.activity())
                .map(|limit| match limit {
                    Limit::Timeout(limit) => HostStop::TimedOut(limit),
                    Limit::Stall(limit) => HostStop::Stalled(limit),
                })
        });
        if let Some(stop) = stop {
            let exit = agent.stop(input.grace);
            return (convert(exit), Some(stop));
        }
        if let (Some(linger), Some(at)) = (linger, ended_at)
            && now.duration_since(at) >= linger
        {
            // The agent printed its last event and lingers (waiting on background work):
            // the round is over, and the stream decides how it went.
            let exit = agent.stop(input.grace);
            return (convert(exit), Some(HostStop::Lingered(linger)));
        }
    }
}

/// What the host's loop follows: the agent's process for a cold round, the turn in a warm
/// agent for a warm one.
pub(super) trait Followed {
    /// Waits until the agent (or its turn) ends, `wake` becomes readable, or `timeout` passes.
    fn wait_timeout(
        &mut self,
        timeout: Duration,
        wake: Option<std::os::fd::BorrowedFd<'_>>,
    ) -> Waited;
    /// Stops the agent (or its turn), waiting up to `grace`.
    fn stop(&mut self, grace: Duration) -> ganger_sandbox::AgentExit;
    /// How busy the agent's processes are.
    fn activity(&self) -> Activity;
}

impl Followed for RunningAgent {
    fn wait_timeout(
        &mut self,
        timeout: Duration,
        wake: Option<std::os::fd::BorrowedFd<'_>>,
    ) -> Waited {
        RunningAgent::wait_timeout(self, timeout, wake)
    }

    fn stop(&mut self, grace: Duration) -> ganger_sandbox::AgentExit {
        RunningAgent::stop(self, grace)
    }

    fn activity(&self) -> Activity {
        Activity::sample(&self.marker)
    }
}

pub(super) fn convert(exit: ganger_sandbox::AgentExit) -> AgentExit {
    match (exit.code, exit.signal) {
        (Some(code), _) => AgentExit::Code(code),
        (None, Some(signal)) => AgentExit::Signal(signal),
        (None, None) => AgentExit::Signal(0),
    }
}
