//! A warm round: the prompt goes into the task's warm agent (crate::round::warm) instead of a new
//! agent process, and everything else is the cold round's: the stream copied to the store
//! and summarized as it comes, the limits, budgets, cancels and signals of the host's loop,
//! the verdict from the stream, then checks and the end as for any round. A round that
//! cannot be warm (the warm host would not start) says why and runs cold.

use super::finish::{self, HostStop};
use super::follow::{Followed, Spending, follow};
use super::output::{self, Progress};
use super::setup::RoundInput;
use super::signals::SignalWatch;
use crate::base::error::{EngineError, Result};
use crate::base::redact::Redactor;
use crate::env::sandboxing::TaskSandbox;
use crate::env::workspace::Workspace;
use crate::evidence::budget::{BudgetWatch, RoundSpend};
use crate::round::warm::policy::Policy;
use crate::round::warm::registry::{found, host_alive, live};
use crate::round::warm::turn::{TurnRequest, WarmTurn, last_turn_ended, open_turn};
use ganger_agents::{Adapter, Permission, WarmProtocol};
use ganger_store::{Backend, Claim, Liveness, RoundStream, StreamKind};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Whether `input`'s round goes to a warm agent: the task wants it (`--warm`, or `[warm]
/// default`, or by default its agent's [`Adapter::warm_by_default`]), its agent has a warm
/// mode, and
/// the round does not fork a session (a rewind).
pub(crate) fn wanted(
    ws: &Workspace,
    store: &dyn Liveness,
    input: &RoundInput,
    adapter: &dyn Adapter,
) -> bool {
    if !(wants_warm(
        input.task.warm,
        ws.config.warm.default,
        adapter.warm_by_default(),
    ) && adapter.warm_plan().is_some()
        && input.round.fork_from.is_none())
    {
        return false;
    }
    // What the task's warm host holds (its session, its last round) is read once it has
    // ended the last round's turn.
    last_turn_ended(ws, store, input);
    // A warm host whose record cannot be read goes to `run_warm_agent`, which stops it (it
    // holds the session) and runs the round cold, saying why.
    if found(ws, store, &input.task.slug).is_some_and(|info| info.unreadable.is_some()) {
        return true;
    }
    started_alike(ws, store, input, adapter)
        && (adapter.warm_loads_sessions() || continues_live(ws, store, input, adapter))
}

/// Whether the task has no warm agent, or one started as this round would start it (same
/// model and agent settings: `fix -m` or a pipeline role's effort change them). An idle one
/// started otherwise is stopped, and the round starts a new one where it can take up the
/// session (for an agent that cannot load one, the round then runs cold).
fn started_alike(
    ws: &Workspace,
    store: &dyn Liveness,
    input: &RoundInput,
    adapter: &dyn Adapter,
) -> bool {
    let Some(info) = live(ws, store, &input.task.slug) else {
        return true;
    };
    if info.fingerprint == crate::round::warm::identity::fingerprint(ws, input) {
        return true;
    }
    !info.busy
        && crate::round::warm::stop_warm(ws, store, &input.task.slug).unwrap_or(false)
        && (adapter.warm_loads_sessions()
            || adapter.warm_protocol() == WarmProtocol::StreamJsonControl
            || input.round.session_before.is_none())
}

/// Whether a task asks for warm rounds: its own `--warm`/`--cold`, else `[warm] default`, else
/// its agent's default ([`Adapter::warm_by_default`]).
pub(crate) fn wants_warm(task: Option<bool>, config: Option<bool>, agent_default: bool) -> bool {
    task.or(config).unwrap_or(agent_default)
}

/// Whether the round starts a new session or continues its warm agent's live one right after
/// that agent's last turn (an agent that cannot load a session serves no other round). An
/// agent whose process is started in a session ([`WarmProtocol::StreamJsonControl`]) gets a
/// new process for another session: its idle host is stopped, and the round starts one.
fn continues_live(
    ws: &Workspace,
    store: &dyn Liveness,
    input: &RoundInput,
    adapter: &dyn Adapter,
) -> bool {
    let stream_json = adapter.warm_protocol() == WarmProtocol::StreamJsonControl;
    let Some(info) = live(ws, store, &input.task.slug) else {
        // A new process: an ACP agent that cannot load sessions starts only new ones.
        return stream_json || input.round.session_before.is_none();
    };
    match &input.round.session_before {
        // An ACP agent makes a new session in the process it has.
        None if !stream_json => return true,
        Some(wanted)
            if info.session.as_ref() == Some(wanted)
                && info
                    .last_round
                    .is_some_and(|last| last + 1 == input.round.number) =>
        {
            return true;
        }
        _ => {}
    }
    stream_json
        && !info.busy
        && crate::round::warm::stop_warm(ws, store, &input.task.slug).unwrap_or(false)
}

/// Runs the round in the task's warm agent; `Ok(Err(why))` when no warm agent could take it
/// (the round then runs cold, and its stderr says why).
pub(super) fn run_warm_agent(
    ws: &Workspace,
    store: &mut dyn Backend,
    input: &RoundInput,
    claim: &Claim,
    adapter: &dyn Adapter,
    redactor: &Redactor,
) -> Result<std::result::Result<finish::Ended, String>> {
    let permission = input.task.permission;
    let request = TurnRequest {
        prompt: input.prompt.clone(),
        session: input.round.session_before.clone(),
        policy: Policy {
            read_only: permission == Permission::ReadOnly,
            worktree: input.task.worktree.clone(),
            rules: ws.config.permissions.clone(),
            sandboxed: TaskSandbox::of(ws, &input.task).is_ok_and(|s| s.isolates()),
        },
        round: input.round.number,
        can_load: adapter.warm_loads_sessions(),
    };
    if input.prompt.trim_start().starts_with('/') {
        // Over ACP such a prompt names one of the agent's commands, and an agent may drop
        // one it does not know without a word (docs/agents/acp-measured.md). Cold, it is text.
        return Ok(Err(
            "the prompt starts with '/', which an agent reads as one of its commands over ACP"
                .to_owned(),
        ));
    }
    let mut turn = match open_turn(ws, &*store, input, &request) {
        Ok(turn) => turn,
        Err(error) => return Ok(Err(error.message)),
    };
    let raw = open_streams(&*store, input, turn.replaced.as_deref(), redactor)?;
    let signals = SignalWatch::install()
        .map_err(|e| EngineError::environment("failed to watch signals", e))?;
    let started = Instant::now();
    let progress = Arc::new(Mutex::new(Progress {
        summary: ganger_events::RoundSummary::default(),
        last_progress: started,
        retrying: false,
        dirty: false,
    }));
    let (closed_tx, closed_rx) = mpsc::channel();
    let (read, done) = turn.stream()?;
    {
        let (progress, redactor) = (Arc::clone(&progress), redactor.clone());
        let parser = adapter.warm_stream_parser();
        std::thread::spawn(move || {
            output::read_stdout(read, raw, redactor, parser, progress, closed_tx);
            drop(done);
        });
    }
    let spending = Spending {
        settle: RoundSpend::of(ws, &input.task, &input.round),
        budget: BudgetWatch::of(&*store, &input.task, &input.round),
    };
    let (exit, mut stop) = follow(
        store, input, claim, &mut turn, &signals, &progress, started, None, spending, redactor,
    );
    let _ = closed_rx.recv_timeout(Duration::from_secs(2));
    let mut summary = match progress.lock() {
        Ok(shared) => shared.summary.clone(),
        Err(poisoned) => poisoned.into_inner().summary.clone(),
    };
    redactor.redact_summary(&mut summary);
    if stop.is_none() && !summary.ended {
        stop = Some(unanswered(ws, &*store, input, &mut turn, &summary));
    }
    let verdict = adapter.warm_verdict(&summary, exit, permission, request.policy.sandboxed);
    Ok(Ok(finish::Ended {
        // No process ended: a warm round's report has no exit code (a failed turn is not
        // "exit 0"), as a round whose agent never started has none.
        exit: None,
        summary,
        stop,
        verdict: Some(verdict),
        start_error: None,
        checks: Vec::new(),
    }))
}

/// Why a turn that ended without an answer stopped (its warm host went away, or failed);
/// whatever the agent left behind is killed once its host is seen gone.
fn unanswered(
    ws: &Workspace,
    store: &dyn Backend,
    input: &RoundInput,
    turn: &mut WarmTurn,
    summary: &ganger_events::RoundSummary,
) -> HostStop {
    let why = summary
        .errors
        .first()
        .cloned()
        .unwrap_or_else(|| "its host went away".to_owned());
    // When the warm host is gone, whatever its agent left (a tool's command it started)
    // goes too (a living host stops its own agent).
    // A host that is exiting closes our connection before the kernel frees its claim:
    // it is given a moment to be seen gone.
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut alive = host_alive(ws, store, &input.task.slug);
    while alive && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        alive = host_alive(ws, store, &input.task.slug);
    }
    let killed = if alive {
        0
    } else {
        turn.kill_leftovers(input.grace)
    };
    let mut reason = format!("the warm agent's turn ended without an answer: {why}");
    if killed > 0 {
        reason.push_str(&format!(
            "; {killed} leftover process(es) of it were killed"
        ));
    }
    HostStop::WarmGone(reason)
}

/// The round's stdout stream, and its stderr written: a warm agent's stderr goes to its
/// host's log, so the round's says only why its warm agent is a new one (`replaced`: the last
/// one failed).
fn open_streams(
    store: &dyn Backend,
    input: &RoundInput,
    replaced: Option<&str>,
    redactor: &Redactor,
) -> Result<Box<dyn std::io::Write + Send>> {
    let stream = |kind| RoundStream::of(&input.task, &input.round, kind);
    let raw = store.create_stream(&stream(StreamKind::Stdout))?;
    let mut err = store.create_stream(&stream(StreamKind::Stderr))?;
    if let Some(why) = replaced {
        let note = format!(
            "ganger: the task's last warm agent failed ({why}): a new one took up the session\n"
        );
        let _ = err.write_all(redactor.redact_str(&note).as_bytes());
    }
    Ok(raw)
}

impl Followed for WarmTurn {
    fn wait_timeout(
        &mut self,
        timeout: Duration,
        wake: Option<std::os::fd::BorrowedFd<'_>>,
    ) -> ganger_sandbox::Waited {
        WarmTurn::wait(self, timeout, wake)
    }

    fn stop(&mut self, grace: Duration) -> ganger_sandbox::AgentExit {
        WarmTurn::cancel(self, grace)
    }

    fn activity(&self) -> ganger_sandbox::Activity {
        WarmTurn::activity(self)
    }
}

#[cfg(test)]
mod tests {
    use super::wants_warm;

    #[test]
    fn the_task_outranks_the_configuration_which_outranks_the_agent() {
        let (warm, cold) = (true, false);
        assert!(wants_warm(None, None, warm));
        assert!(!wants_warm(None, None, cold));
        assert!(!wants_warm(None, Some(false), warm));
        assert!(wants_warm(None, Some(true), cold));
        assert!(wants_warm(Some(true), Some(false), cold));
        assert!(!wants_warm(Some(false), Some(true), warm));
        assert!(!wants_warm(Some(false), None, warm));
    }
}
