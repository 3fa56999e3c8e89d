//! Recording how a round ended: its status and the reason, the worker's full answer, a
//! snapshot of the worktree (`refs/ganger/SLUG/round-N`) with what the round changed, and the
//! end itself, in one store transaction. Also the reaper's side: settling a round whose host
//! died, after stopping whatever of it is left (its processes, and its containers when there
//! is a Docker socket).

use super::setup::{BeforeState, RoundInput};
use super::signals::signal_name;
use crate::base::config::format_duration;
use crate::base::error::Result;
use crate::env::workspace::Workspace;
use ganger_agents::{AgentExit, Verdict};
use ganger_events::{RoundStatus, RoundSummary};
use ganger_git::{IndexEntry, Repo, Scope, Watched, diff_entries};
use ganger_sandbox::{Cgroup, RoundMarker, kill_round};
use ganger_store::{Backend, CheckRun, Round, RoundEnd, RoundStream, Store, StreamKind, Task};
use std::time::Duration;

/// How long a round host keeps trying to record its round's end in a store it cannot reach.
const UNREACHABLE_PATIENCE: Duration = Duration::from_secs(120);

/// Why the host stopped a round itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostStop {
    TimedOut(Duration),
    Stalled(Duration),
    Cancelled,
    Signal(i32),
    /// The agent printed its last event and was still running this long after: stopped, and
    /// judged by its stream alone.
    Lingered(Duration),
    /// A budget of the task or its fleet was reached while the agent worked (the reason
    /// names it).
    Budget(String),
    /// A warm round's agent or its host went away before the turn ended (the reason says
    /// which): the round was interrupted, as a cold round whose host died.
    WarmGone(String),
    /// The host lost the round's claim (a lease that ran out unrenewed: a partition, a paused
    /// host): the store refuses its writes of the round, which whoever found it dead settles.
    ClaimLost,
}

/// What the host saw of the agent.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    pub exit: Option<AgentExit>,
    pub summary: RoundSummary,
    pub stop: Option<HostStop>,
    pub verdict: Option<Verdict>,
    /// Why the agent could not be started at all.
    pub start_error: Option<String>,
    /// The round's checks with their results, once they ran.
    pub checks: Vec<CheckRun>,
}

impl Ended {
    pub(crate) fn failed_to_start(message: String) -> Ended {
        Ended {
            exit: None,
            summary: RoundSummary::default(),
            stop: None,
            verdict: None,
            start_error: Some(message),
            checks: Vec::new(),
        }
    }

    /// A round stopped (cancelled, or by a signal to its host) before its agent started.
    pub(crate) fn stopped_before_start(stop: HostStop) -> Ended {
        Ended {
            exit: None,
            summary: RoundSummary::default(),
            stop: Some(stop),
            verdict: None,
            start_error: None,
            checks: Vec::new(),
        }
    }

    /// Whether the agent finished and said it is done: only then do the checks run.
    pub(crate) fn agent_done(&self) -> bool {
        self.start_error.is_none()
            && matches!(self.stop, None | Some(HostStop::Lingered(_)))
            && self.verdict.as_ref().is_some_and(|v| v.done)
    }

    fn status(&self) -> (RoundStatus, Option<String>) {
        if let Some(error) = &self.start_error {
            return (
                RoundStatus::Failed,
                Some(format!("the agent did not run: {error}")),
            );
        }
        match &self.stop {
            Some(HostStop::TimedOut(limit)) => (
                RoundStatus::TimedOut,
                Some(format!(
                    "stopped at the wall-clock limit of {}",
                    format_duration(*limit)
                )),
            ),
            Some(HostStop::Stalled(limit)) => (
                RoundStatus::Stalled,
                Some(format!(
                    "stopped after {} without a new event or any activity of its processes (the stall limit)",
                    format_duration(*limit)
                )),
            ),
            Some(HostStop::Cancelled) => (
                RoundStatus::Cancelled,
                Some("cancelled (ganger cancel)".into()),
            ),
            Some(HostStop::Signal(signal)) => (
                RoundStatus::Cancelled,
                Some(format!("stopped by {} to its host", signal_name(*signal))),
            ),
            Some(HostStop::Budget(why)) => {
                (RoundStatus::Cancelled, Some(format!("stopped: {why}")))
            }
            Some(HostStop::WarmGone(why)) => (RoundStatus::Interrupted, Some(why.clone())),
            Some(HostStop::ClaimLost) => (
                RoundStatus::Interrupted,
                Some(
                    "its host lost the round's lease (not renewed in time) and stopped the agent"
                        .into(),
                ),
            ),
            None | Some(HostStop::Lingered(_)) => match &self.verdict {
                Some(verdict) if verdict.done => match failed_checks(&self.checks) {
                    Some(reason) => (RoundStatus::Failed, Some(reason)),
                    None => (RoundStatus::Done, None),
                },
                Some(verdict) => (RoundStatus::Failed, verdict.reason.clone()),
                None => (
                    RoundStatus::Failed,
                    Some("the round ended without a verdict".into()),
                ),
            },
        }
    }
}

/// Why a round whose agent was done failed on its checks, if it did.
fn failed_checks(checks: &[CheckRun]) -> Option<String> {
    let failed: Vec<String> = checks
        .iter()
        .filter_map(|check| {
            let result = check.result.as_ref()?;
            if result.passed {
                return None;
            }
            Some(if result.timed_out {
                format!("{} (timed out)", check.name)
            } else if let Some(code) = result.exit_code {
                format!("{} (exit {code})", check.name)
            } else {
                format!("{} (signal {})", check.name, result.signal.unwrap_or(0))
            })
        })
        .collect();
    (!failed.is_empty()).then(|| {
        format!(
            "the agent said it was done, but checks failed: {}",
            failed.join(", ")
        )
    })
}

fn listing(changes: &[ganger_git::TreeChange]) -> Vec<String> {
    changes
        .iter()
        .map(|change| format!("{} {}", change.kind.letter(), change.path))
        .collect()
}

/// Snapshots the worktree after round `number` and lists what changed.
struct After {
    commit: Option<String>,
    changed: Vec<String>,
    worktree_changes: Vec<String>,
    problem: Option<String>,
}

fn after_state(
    ws: &Workspace,
    opened: Option<&Repo>,
    task: &Task,
    number: u32,
    before: Option<&[IndexEntry]>,
    watched: Option<&Watched>,
) -> After {
    let mut after = After {
        commit: None,
        changed: Vec::new(),
        worktree_changes: Vec::new(),
        problem: None,
    };
    if !task.worktree.is_dir() {
        after.problem = Some(format!("the worktree {} is gone", task.worktree.display()));
        return after;
    }
    let reopened;
    let worktree = match opened {
        Some(worktree) => worktree,
        None => match ws.repo.open_worktree(&task.worktree) {
            Ok(worktree) => {
                reopened = worktree;
                &reopened
            }
            Err(e) => {
                after.problem = Some(format!("the worktree cannot be read: {e}"));
                return after;
            }
        },
    };
    let name = format!("refs/ganger/{}/round-{number}", task.slug);
    let message = format!("ganger: {} after round {number}", task.slug);
    let overlay_paths = match watched {
        Some(Watched::Paths(_)) => None,
        _ => crate::evidence::tree_change::changed_paths(ws, &task.worktree),
    };
    // With the watch's list, the index is as it was before the round (the watch vouches).
    let (scope, index_before) = match (watched, before) {
        (Some(Watched::Paths(paths)), Some(before)) => (
            Scope::Paths {
                paths,
                index: Some(before),
            },
            Some(before),
        ),
        // An overlay's upper folder tells the changed paths too (the index may have moved).
        _ => match overlay_paths.as_ref() {
            Some(paths) => (Scope::Paths { paths, index: None }, None),
            None => (Scope::Everything, None),
        },
    };
    match worktree.snapshot_of(Some(&name), &message, scope) {
        Ok(snapshot) => {
            after.commit = Some(snapshot.commit);
            if let Some(entries) = &snapshot.entries {
                if let Some(before) = before {
                    after.changed = listing(&diff_entries(before, entries));
                }
                let index = match index_before {
                    Some(index) => Some(std::borrow::Cow::Borrowed(index)),
                    None => worktree.index_entries().map(std::borrow::Cow::Owned),
                };
                if let Some(index) = index {
                    after.worktree_changes = listing(&diff_entries(&index, entries));
                }
            } else if let Ok(status) =
                crate::evidence::tree_change::status(ws, &task.worktree, worktree)
            {
                after.worktree_changes = status.entries.iter().map(|e| e.short()).collect();
            }
        }
        Err(e) => after.problem = Some(format!("the snapshot failed: {e}")),
    }
    after
}

/// Records the end of a round the host ran.
pub(crate) fn record_end(
    ws: &Workspace,
    store: &mut dyn Backend,
    input: &RoundInput,
    worktree: Option<&Repo>,
    before: &BeforeState,
    watched: Option<&Watched>,
    ended: Ended,
) -> Result<HostOutcome> {
    let (mut status, mut reason) = ended.status();
    let task = &input.task;
    let number = input.round.number;
    // A round its sandbox failed (a Docker daemon that went away) says so, not only "the
    // command exited with code 125".
    if status == RoundStatus::Failed
        && let Ok(sandbox) = crate::env::sandboxing::TaskSandbox::of(ws, task)
        && let Some(why) = sandbox.sandbox.failure(
            match ended.exit {
                Some(AgentExit::Code(code)) => Some(code),
                _ => None,
            },
            &crate::evidence::report::tail_lines(
                &ws.state.round_file(&task.slug, number, "err"),
                5,
            ),
        )
    {
        reason = Some(why);
    }
    if let Some(answer) = &ended.summary.answer {
        // The summary was redacted after it was decoded from the (redacted) stream.
        let _ = std::fs::write(ws.state.round_file(&task.slug, number, "answer.md"), answer);
    }
    let after = after_state(
        ws,
        worktree,
        task,
        number,
        before.entries.as_deref(),
        watched,
    );
    if let Some(problem) = after.problem {
        // Work that cannot be seen after the round is not done: a worktree removed under the
        // round (its writes went nowhere) or one that cannot be snapshotted.
        if status == RoundStatus::Done {
            status = RoundStatus::Failed;
        }
        reason = Some(match reason {
            Some(reason) => format!("{reason}; {problem}"),
            None => problem,
        });
    }
    // The work goes to the fleet's remote before the end is recorded (see `push`).
    let session = ended
        .summary
        .session
        .clone()
        .or_else(|| input.round.session_before.clone());
    if let Some(worktree) = worktree
        && let Some(unpushed) =
            super::push::push_round(ws, &*store, task, number, session.as_deref(), worktree)
    {
        reason = Some(match reason {
            Some(reason) => format!("{reason}; {unpushed}"),
            None => unpushed,
        });
    }
    let mut summary = ended.summary;
    settle_figures(
        ws,
        &*store,
        task,
        number,
        input.round.model.as_deref(),
        &mut summary,
    );
    let (exit_code, exit_signal) = match ended.exit {
        Some(AgentExit::Code(code)) => (Some(code), None),
        Some(AgentExit::Signal(signal)) => (None, Some(signal)),
        None => (None, None),
    };
    let end = RoundEnd {
        status,
        snapshot_before: before.commit.clone(),
        reason,
        session,
        exit_code,
        exit_signal,
        summary,
        snapshot_after: after.commit,
        changed: after.changed,
        worktree_changes: after.worktree_changes,
        checks: ended.checks,
    };
    let budget = match &ended.stop {
        Some(HostStop::Budget(why)) => Some(why.clone()),
        _ => None,
    };
    let recorded = finish_while_busy(store, input.round.id, &end)?;
    let outcome = outcome(store, task, number)?;
    if recorded {
        super::evidence::record(store, &outcome.task, &outcome.round, budget.as_deref());
        crate::evidence::conflicts::predict(ws, store, &outcome.task, &outcome.round);
    }
    Ok(outcome)
}

/// Records a finished round's end, trying again for as long as the store is busy: the host
/// holds its lock all the while, so nobody takes the round for dead, and a round whose agent
/// finished is never recorded as interrupted because another process held the store. A
/// store that cannot be reached (a server restarting) is tried again for
/// [`UNREACHABLE_PATIENCE`]: the round's lease, renewed meanwhile where it can be, fences the
/// write if others settled the round in the meantime.
fn finish_while_busy(store: &mut dyn Store, round_id: i64, end: &RoundEnd) -> Result<bool> {
    let mut wait = Duration::from_millis(50);
    let since = std::time::Instant::now();
    loop {
        match store.finish_round(round_id, end) {
            Err(e)
                if e.is_busy()
                    || (e.is_unreachable() && since.elapsed() < UNREACHABLE_PATIENCE) =>
            {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            other => return Ok(other?),
        }
    }
}

/// The round's own token figures and its cost: session totals (of agents that report them) less
/// the previous round's totals in the same session, and a cost from `ganger.toml`'s price table when the
/// agent reports none.
fn settle_figures(
    ws: &Workspace,
    store: &dyn Store,
    task: &Task,
    number: u32,
    model: Option<&str>,
    summary: &mut RoundSummary,
) {
    if summary.session_tokens.is_some() {
        let previous = crate::evidence::budget::previous_session_tokens(
            store,
            task.id,
            number,
            summary.session.as_deref(),
        );
        summary.settle_session_tokens(previous);
    }
    if summary.cost_usd.is_none()
        && let Some(price) = model.and_then(|model| ws.config.prices.get(model))
    {
        summary.cost_usd = Some(price.cost(&summary.tokens));
    }
}

fn outcome(store: &dyn Store, task: &Task, number: u32) -> Result<HostOutcome> {
    let task = store.task(&task.slug)?.ok_or_else(|| {
        crate::base::error::EngineError::invalid(format!("task {} vanished", task.slug))
    })?;
    let round = store.round(task.id, Some(number))?.ok_or_else(|| {
        crate::base::error::EngineError::invalid(format!(
            "round {number} of {} vanished",
            task.slug
        ))
    })?;
    // Read while the store is open: the report then needs no connection of its own.
    let budgets = crate::evidence::budget::budgets_of(store, &task);
    Ok(HostOutcome {
        task,
        round,
        budgets,
    })
}

/// If the host of a running `round` is gone, stops what is left of the round and records it
/// as interrupted. Returns whether it settled the round.
pub(crate) fn settle_dead_round(
    ws: &Workspace,
    store: &mut dyn Backend,
    task: &Task,
    round: &Round,
) -> Result<bool> {
    if store.is_alive(&round.claim)? {
        return Ok(false);
    }
    // Re-read: the host may have finished between our look at the row and at the lock.
    let Some(current) = store.round(task.id, Some(round.number))? else {
        return Ok(false);
    };
    if current.status != RoundStatus::Running {
        return Ok(false);
    }
    let marker = RoundMarker {
        token: round.token.clone(),
        session: round.agent.map(|a| a.pid),
        cgroup: round.cgroup.as_ref().map(Cgroup::at),
    };
    let killed = kill_round(&marker, Duration::from_secs(2));
    crate::env::agent_tmp::remove_left(&round.token);
    let host = round.host.map_or_else(
        || "its host".to_owned(),
        |h| format!("its host (pid {})", h.pid),
    );
    // A cancel's SIGTERM can reach a detached host before it watches for signals: the round
    // was cancelled all the same.
    let (status, mut reason) = if current.cancel_requested {
        (
            RoundStatus::Cancelled,
            format!("cancelled (ganger cancel); {host} ended before recording it"),
        )
    } else {
        (
            RoundStatus::Interrupted,
            format!("{host} died before the round ended"),
        )
    };
    if killed > 0 {
        reason.push_str(&format!(
            "; {killed} leftover process(es) of the round were killed"
        ));
    }
    match crate::env::leftovers::remove_round_containers(&round.token) {
        Ok(0) => {}
        Ok(removed) => reason.push_str(&format!(
            "; {removed} container(s) of the round were removed"
        )),
        Err(why) => reason.push_str(&format!("; its containers could not be removed: {why}")),
    }
    let after = after_state(ws, None, task, round.number, None, None);
    // The raw stream is complete up to the host's death; the stored summary may lag it.
    let mut summary =
        reread_summary(ws, &*store, task, &current).unwrap_or_else(|| current.summary.clone());
    // What the parser decoded is redacted as the host would have (a key file that is gone
    // leaves only the raw stream's redaction).
    if let Ok(keys) = crate::env::keys::load_keys(&ws.config, &task.keys) {
        crate::env::keys::LoadedKey::redactor(&ws.store, &keys).redact_summary(&mut summary);
    }
    settle_figures(
        ws,
        &*store,
        task,
        round.number,
        round.model.as_deref(),
        &mut summary,
    );
    let end = RoundEnd {
        status,
        snapshot_before: None,
        reason: Some(reason),
        // The stream's session, else the one the round named up front, else the one it
        // continued.
        session: summary
            .session
            .clone()
            .or_else(|| current.session.clone())
            .or_else(|| current.session_before.clone()),
        exit_code: None,
        exit_signal: None,
        summary,
        snapshot_after: after.commit,
        changed: Vec::new(),
        worktree_changes: after.worktree_changes,
        checks: Vec::new(),
    };
    let settled = store.finish_round(round.id, &end)?;
    if settled && let Ok(Some(ended)) = store.round(task.id, Some(round.number)) {
        super::evidence::record(store, task, &ended, None);
    }
    store.forget_claim(&round.claim);
    Ok(settled)
}

/// The summary of a round's raw stream, read again from the store through its adapter a
/// block at a time (the stream may be as large as the agent made it), with the events the
/// adapter reads in its stderr (as the round host folds them). `None` when the agent never
/// made a stream, it cannot be read, or its adapter is unknown: the stored summary stands.
pub(crate) fn reread_summary(
    ws: &Workspace,
    store: &dyn Backend,
    task: &Task,
    round: &Round,
) -> Option<RoundSummary> {
    let adapter = crate::env::agent_env::adapter_for(&task.agent, &ws.config)?;
    let stream = |kind| RoundStream::of(task, round, kind);
    let stdout = store
        .read_stream(&stream(StreamKind::Stdout), 0)
        .ok()
        .flatten()?;
    let mut summary =
        ganger_agents::summarize_reader(&mut ganger_agents::acp::WarmOrCold::of(adapter), stdout)
            .ok()?;
    if let Ok(Some(mut stderr)) = store.read_stream(&stream(StreamKind::Stderr), 0) {
        use std::io::Read;
        let mut cutter = ganger_agents::scan::LineCutter::default();
        let mut block = vec![0u8; 64 * 1024];
        let mut fold = |_: u64, line: ganger_agents::scan::Line<'_>| {
            if let ganger_agents::scan::Line::Content(line) = line
                && let Some(event) = adapter.stderr_event(line)
            {
                summary.apply(&event);
            }
        };
        while let Ok(read) = stderr.read(&mut block) {
            if read == 0 {
                break;
            }
            cutter.push(&block[..read], &mut fold);
        }
        cutter.finish(&mut fold);
    }
    Some(summary)
}

/// A finished round and its task, as stored.
#[derive(Debug, Clone)]
pub struct HostOutcome {
    pub task: Task,
    pub round: Round,
    /// The task's and its fleet's budgets and spending at the round's end.
    pub budgets: Option<crate::evidence::budget::Budgets>,
}

pub(super) fn stop_for_signal(store: &mut dyn Store, input: &RoundInput, signal: i32) -> HostStop {
    if cancel_requested(store, input) {
        HostStop::Cancelled
    } else {
        HostStop::Signal(signal)
    }
}

pub(super) fn cancel_requested(store: &mut dyn Store, input: &RoundInput) -> bool {
    store
        .round(input.task.id, Some(input.round.number))
        .ok()
        .flatten()
        .is_some_and(|round| round.cancel_requested)
}
