//! The round host: runs one round from start to its recorded end. It is the foreground
//! command itself, or a detached `ganger` process started for `--detach`; either way it holds
//! the round's claim for its whole life, so that its death is visible to everyone.

use super::finish::{self, HostOutcome, HostStop};
use super::follow::{Spending, follow};
use super::gateway::Redirect;
use super::output::{self, Closed, Progress};
use super::setup::{BeforeState, RoundInput, adapter_of, before_state};
use super::signals::SignalWatch;
use crate::base::error::{EngineError, Result};
use crate::base::redact::Redactor;
use crate::env::agent_env;
use crate::env::agent_tmp::{self, AgentTmp, Removing};
use crate::env::keys;
use crate::env::sandboxing::{Confinement, TaskSandbox, confine, sandbox_environment};
use crate::env::workspace::Workspace;
use crate::evidence::budget::{BudgetWatch, RoundSpend};
use ganger_agents::{Adapter, AgentExit, CommandPlan, Permission, RoundRequest};
use ganger_sandbox::{AgentCommand, ProcessId, RunningAgent, spawn_local};
use ganger_store::{Backend, Claim, ProcessRef, RoundStream, StreamKind};
use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the host waits for the agent's pipes to close after it exited.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Runs the round in `input` to its end and records it. The claim is released at the end.
/// `stops`: the stop signals' watch, when the host took it before (else taken here).
pub fn run_host(
    ws: &Workspace,
    store: &mut dyn Backend,
    input: RoundInput,
    claim: Claim,
    stops: Option<SignalWatch>,
) -> Result<HostOutcome> {
    // Stop signals are watched for the host's whole life (a detached host's from its first
    // step, `stops`), not only while its agent or checks run: a cancel's SIGTERM between two
    // phases (the host's start, the worktree's look before the agent, the checks' start, the
    // snapshot) no longer kills the host, leaving the round for whoever finds it dead to
    // settle the slow way (a search for its leftovers, the snapshot again). The round ends
    // cancelled there instead ([`stopped_between`]).
    let stops = stops.or_else(|| SignalWatch::install().ok());
    if let Some(me) = ProcessId::current() {
        let me = ProcessRef {
            pid: me.pid,
            start_ticks: me.start_ticks,
        };
        // A detached host replaces the command that started it; a foreground one is it.
        if input.round.host != Some(me) {
            store.record_host(input.round.id, me)?;
        }
    }
    let fresh = input.round.number == 1 && input.task.worktree_made;
    // Checked again here, where the agent is about to run: still a linked worktree of this
    // repository on the task's branch.
    let worktree = crate::evidence::task_worktree::check_task_worktree(ws, &input.task);
    let before = worktree
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|worktree| before_state(ws, &input.task, worktree, input.round.number, fresh));
    // A worktree made for this round is its index: from here the kernel tells which paths
    // change, so that the end snapshot asks git about those only (docs/design.md, "Snapshots";
    // in a small tree git's full look is cheaper than a watch). Not on a FUSE overlay: a watch
    // there has the FUSE server load every directory of the tree (0.4 s at 100,000 files),
    // while its upper folder tells the change anyway.
    let watch = match (&worktree, &before) {
        (Ok(worktree), Ok(before))
            if fresh
                && !crate::evidence::tree_overlay::mounted_by_fuse(ws, &input.task.worktree) =>
        {
            before
                .entries
                .as_deref()
                .filter(|entries| entries.len() >= ganger_git::WORTH_WATCHING)
                .map(|entries| worktree.watch_changes(entries))
        }
        _ => None,
    };
    // The run's keys, read once: given to the agent, and removed from everything the round
    // writes (its streams, its checks' output).
    let keys = keys::load_keys(&ws.config, &input.task.keys);
    let redactor = keys
        .as_deref()
        .map(|keys| keys::LoadedKey::redactor(&ws.store, keys))
        .unwrap_or_else(|_| keys::LoadedKey::redactor(&ws.store, &[]));
    // The agent's temporary directory, being removed while the round's end is recorded.
    let mut tmp_removal = None;
    let (before, ended) = match before {
        Ok(before) => {
            let adapter = crate::env::agent_env::adapter_for(&input.task.agent, &ws.config);
            let own_edits = super::own_edits::OwnEdits::before(adapter, &input.task.worktree);
            let stopped = stopped_between(store, &input, stops.as_ref());
            let run = match stopped {
                Some(stop) => Ok(finish::Ended::stopped_before_start(stop)),
                None => keys
                    .and_then(|keys| run_agent(ws, store, &input, &claim, &keys, &redactor))
                    .map(|(ended, removal)| {
                        tmp_removal = removal;
                        ended
                    }),
            };
            // What the agent's CLI wrote for itself is not the task's work: taken back before
            // the checks and the snapshot see it.
            own_edits.take_back();
            let mut ended = match run {
                Ok(ended) => ended,
                Err(error) => finish::Ended::failed_to_start(error.message),
            };
            if ended.stop.is_none() {
                ended.stop = stopped_between(store, &input, stops.as_ref());
            }
            if ended.agent_done() && !input.round.checks.is_empty() {
                let (checks, stop) = super::checks::run_checks(ws, store, &input, &redactor);
                ended.checks = checks;
                if stop.is_some() {
                    ended.stop = stop;
                }
                if ended.stop.is_none() {
                    ended.stop = stopped_between(store, &input, stops.as_ref());
                }
            }
            (before, ended)
        }
        Err(error) => (
            BeforeState::default(),
            finish::Ended::failed_to_start(error.message),
        ),
    };
    let watched = watch.map(ganger_git::ChangeWatch::finish);
    let outcome = finish::record_end(
        ws,
        store,
        &input,
        worktree.as_ref().ok(),
        &before,
        watched.as_ref(),
        ended,
    );
    // The round has ended: its streams are packed into one object each (PostgreSQL), while
    // the claim is held, so that a host that lost it (paused past its lease) packs nothing
    // of a round now another's to settle. A failure leaves the rows, which read the same,
    // for a scheduler's pass to pack.
    if outcome.is_ok() {
        crate::base::faults::pause("host-before-packing");
        let _ = store.compact_streams(input.round.id);
    }
    claim.release();
    drop(tmp_removal);
    drop(stops);
    outcome
}

/// The stop a signal to the host asks for, if one came while neither the agent nor the checks
/// watched (they see their own): a cancel's, or the signal's.
fn stopped_between(
    store: &mut dyn Backend,
    input: &RoundInput,
    stops: Option<&SignalWatch>,
) -> Option<HostStop> {
    let signal = stops?.received()?;
    Some(finish::stop_for_signal(store, input, signal))
}

/// The command for this round, and the session it names up front, if any.
fn agent_command(
    ws: &Workspace,
    input: &RoundInput,
    adapter: &dyn Adapter,
    keys: &[keys::LoadedKey],
    redirect: Option<&Redirect>,
) -> Result<Planned> {
    planned_command(ws, input, adapter, keys, None, redirect)
}

/// An agent's command as planned, with what goes with it.
pub(crate) struct Planned {
    pub command: AgentCommand,
    /// The session the command line names up front, if any.
    pub session: Option<String>,
    /// The agent's private temporary directory (the local sandbox's), removed when dropped:
    /// kept until the agent has ended.
    pub tmp: Option<AgentTmp>,
}

/// The command of the task's agent kept warm ([`Adapter::warm_plan`]), its processes marked
/// with `token` (they outlive the round), and the session it starts in when its command line
/// names one.
pub(crate) fn warm_agent_command(
    ws: &Workspace,
    input: &RoundInput,
    keys: &[keys::LoadedKey],
    token: &str,
    redirect: Option<&Redirect>,
) -> Result<Planned> {
    let adapter = adapter_of(ws, &input.task)?;
    planned_command(ws, input, adapter, keys, Some(token), redirect)
}

/// The round's command as `adapter` plans it: the cold one, or with `warm` (the warm
/// process's marker) the warm one.
fn planned_command(
    ws: &Workspace,
    input: &RoundInput,
    adapter: &dyn Adapter,
    keys: &[keys::LoadedKey],
    warm: Option<&str>,
    redirect: Option<&Redirect>,
) -> Result<Planned> {
    let program = agent_env::resolve_program(adapter, &ws.config)?;
    let mut overlay = agent_env::config_overlay(adapter, &ws.config);
    let settings = redirect.map_or(&[][..], |r| r.config.as_slice());
    if !settings.is_empty() {
        let table = overlay.get_or_insert_with(|| serde_json::Value::Object(Default::default()));
        for (path, value) in settings {
            ganger_agents::set_config(table, path, value);
        }
    }
    let inherited = agent_env::inherited_config(adapter, &ws.config);
    let sandbox = TaskSandbox::of(ws, &input.task)?;
    let isolated = sandbox.isolates();
    let worktree = &input.task.worktree;
    let agent_dir = if isolated {
        ws.state.task_agent_dir(&input.task.slug)
    } else {
        ws.state.agent_dir(adapter.name())
    };
    // A sandbox's agent has a /tmp of its own; one run as the user runs it gets a private
    // TMPDIR, unless ganger.toml's env names one.
    let tmp = if isolated {
        None
    } else {
        let token = warm.map_or_else(
            || input.round.token.clone(),
            |_| crate::base::tokens::new_token(),
        );
        AgentTmp::unless_configured(adapter, &ws.config, &token)?
    };
    let request_env = if isolated {
        let nothing = CommandPlan::new(Vec::new(), Vec::new(), None);
        sandbox_environment(adapter, &ws.config, &nothing, keys, &agent_dir, worktree)
            .into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect()
    } else {
        let mut env = agent_env::request_env(adapter, &ws.config, keys);
        if let Some(tmp) = &tmp {
            env.insert(
                agent_tmp::VAR.to_owned(),
                tmp.path().to_string_lossy().into_owned(),
            );
        }
        env
    };
    let permission = input.task.permission;
    let new_session_id = crate::base::tokens::new_uuid();
    let request = RoundRequest {
        // After a rewind the round forks an earlier session at the rewound point.
        resume_at: input.round.fork_from.as_ref().map(|f| f.at.as_str()),
        prompt: &input.prompt,
        session: match &input.round.fork_from {
            Some(fork) => Some(fork.session.as_str()),
            None => input.round.session_before.as_deref(),
        },
        new_session_id: &new_session_id,
        title: &input.task.slug,
        model: input.round.model.as_deref(),
        worktree: &input.task.worktree,
        config: overlay.as_ref(),
        inherited_config: inherited.as_deref(),
        permission,
        sandboxed: isolated,
        env: &request_env,
        agent_dir: &agent_dir,
    };
    let plan = match warm {
        None => adapter.plan(&request)?,
        Some(_) => (adapter.warm_plan().ok_or_else(|| {
            EngineError::invalid(format!("{} has no warm mode", adapter.display_name()))
        })?)(&request)?,
    };
    if isolated {
        private_home(&agent_dir)?;
    }
    write_plan_files(&plan)?;
    let env = if isolated {
        sandbox_environment(adapter, &ws.config, &plan, keys, &agent_dir, worktree)
    } else {
        let mut env = agent_env::agent_environment(adapter, &ws.config, &plan, keys);
        if let Some(tmp) = &tmp {
            tmp.set_in(&mut env, &plan);
        }
        env
    };
    let command = AgentCommand {
        program,
        args: plan.args.iter().map(Into::into).collect(),
        env,
        cwd: worktree.clone(),
        // A warm agent's stdin is its conversation: a sandbox that relays it (Docker's
        // container) attaches it, as it does a cold round's prompt.
        stdin: match warm {
            Some(_) => Some(plan.stdin.unwrap_or_default()),
            None => plan.stdin,
        },
        token: warm.map_or_else(|| input.round.token.clone(), str::to_owned),
        // A warm agent outlives its rounds: no cgroup named after one.
        use_cgroup: ws.config.sandbox.cgroup && warm.is_none(),
    };
    let confined = Confinement {
        sandbox: &sandbox,
        task: &input.task,
        round: input.round.number,
        home: &agent_dir,
        writable: permission == Permission::Write,
        grace: input.grace,
        gateway: redirect.and_then(|r| r.door.as_ref()),
    };
    Ok(Planned {
        command: confine(ws, adapter, &confined, command)?,
        session: plan.session,
        tmp,
    })
}

/// Makes a sandboxed task's agent home, readable by its owner only: the agent keeps its
/// sessions there, and they hold whatever its tools printed (ganger cannot redact another
/// program's own files). Existing homes are made private again at every round.
fn private_home(dir: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| EngineError::io("restrict", dir, e))
}

/// Creates the directories and writes the files the plan asks for (settings the agent reads
/// from a path in its environment). Written fresh every round, so an edit of `ganger.toml`
/// takes effect at the next round.
pub(crate) fn write_plan_files(plan: &CommandPlan) -> Result<()> {
    for dir in &plan.dirs {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    }
    for (path, contents) in &plan.files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
        }
        std::fs::write(path, contents).map_err(|e| EngineError::io("write", path, e))?;
    }
    Ok(())
}

/// Starts the agent and follows it to its end; its stdout and stderr go to the round's
/// streams in the store. The task's warm agent takes the round when it can.
fn run_agent(
    ws: &Workspace,
    store: &mut dyn Backend,
    input: &RoundInput,
    claim: &Claim,
    keys: &[keys::LoadedKey],
    redactor: &Redactor,
) -> Result<(finish::Ended, Option<Removing>)> {
    let adapter = adapter_of(ws, &input.task)?;
    if !input.task.worktree.is_dir() {
        return Err(EngineError::invalid(format!(
            "the worktree {} is gone",
            input.task.worktree.display()
        )));
    }
    let cold_because = match try_warm(ws, store, input, claim, adapter, redactor)? {
        Ok(ended) => return Ok((ended, None)),
        Err(why) => why,
    };
    // The task's idle warm agent holds the session a cold round continues (an agent's own
    // server may even refuse another writer of it): it is stopped first, and the next
    // warm round starts one that takes up the session as this round leaves it.
    let stopped_warm = crate::round::warm::registry::live(ws, &*store, &input.task.slug)
        .is_some_and(|info| !info.busy)
        && crate::round::warm::stop_warm(ws, &*store, &input.task.slug).unwrap_or(false);
    // With keys, the agent gets placeholders and the gateway's URL; the gateway holds the
    // keys until the round ends.
    let gateway = super::gateway::open(ws, &*store, adapter, input, keys, true)?;
    let (agent_keys, redirect) = match &gateway {
        Some((_, redirect)) => (redirect.vars.clone(), Some(redirect)),
        None => (keys.to_vec(), None),
    };
    let Planned {
        command,
        session: named_session,
        tmp,
    } = agent_command(ws, input, adapter, &agent_keys, redirect)?;
    let (raw, err) = open_streams(&*store, input, redactor, cold_because, stopped_warm)?;
    let signals = SignalWatch::install()
        .map_err(|e| EngineError::environment("failed to watch signals", e))?;
    let started = Instant::now();
    let mut agent = spawn_local(&command)?;
    store.record_agent(
        input.round.id,
        ProcessRef {
            pid: agent.process.pid,
            start_ticks: agent.process.start_ticks,
        },
        agent.marker.cgroup.as_ref().map(|c| c.path()),
        named_session.as_deref(),
    )?;
    let progress = Arc::new(Mutex::new(Progress {
        summary: ganger_events::RoundSummary {
            session: named_session,
            ..Default::default()
        },
        last_progress: started,
        retrying: false,
        dirty: false,
    }));
    let closed_rx = start_readers(&mut agent, (raw, err), redactor, adapter, &progress);
    let spending = Spending {
        settle: RoundSpend::of(ws, &input.task, &input.round),
        budget: BudgetWatch::of(&*store, &input.task, &input.round),
    };
    let (exit, stop) = follow(
        store,
        input,
        claim,
        &mut agent,
        &signals,
        &progress,
        started,
        adapter.linger(),
        spending,
        redactor,
    );
    drain(&agent, &closed_rx, input.grace);
    if let Some((gateway, _)) = gateway {
        progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .summary
            .gateway = Some(gateway.tally());
    }
    // The agent and what it started are gone: its temporary directory goes on the side.
    let tmp_removal = tmp.map(AgentTmp::remove_aside);
    if let Ok(sandbox) = TaskSandbox::of(ws, &input.task) {
        sandbox.after_round(&input.round.token);
    }
    let ended = judge(ws, input, adapter, &progress, redactor, exit, stop);
    Ok((ended, tmp_removal))
}

/// The round run by the task's warm agent (`Ok`), or why it runs cold (`Err`: `None` when
/// no warm agent was wanted).
fn try_warm(
    ws: &Workspace,
    store: &mut dyn Backend,
    input: &RoundInput,
    claim: &Claim,
    adapter: &'static dyn Adapter,
    redactor: &Redactor,
) -> Result<std::result::Result<finish::Ended, Option<String>>> {
    if !super::warm_round::wanted(ws, &*store, input, adapter) {
        return Ok(Err(None));
    }
    if let Some(why) = crate::round::warm::identity::failed_before(ws, input)
        .or_else(|| crate::round::warm::identity::unable_before(ws, input))
    {
        return Ok(Err(Some(why)));
    }
    Ok(
        super::warm_round::run_warm_agent(ws, store, input, claim, adapter, redactor)?
            .map_err(Some),
    )
}

/// The round's stdout and stderr streams, the latter opened with why the round runs cold.
fn open_streams(
    store: &dyn Backend,
    input: &RoundInput,
    redactor: &Redactor,
    cold_because: Option<String>,
    stopped_warm: bool,
) -> Result<(Box<dyn Write + Send>, Box<dyn Write + Send>)> {
    let stream = |kind| RoundStream::of(&input.task, &input.round, kind);
    let raw = store.create_stream(&stream(StreamKind::Stdout))?;
    let mut err = store.create_stream(&stream(StreamKind::Stderr))?;
    if let Some(why) = cold_because {
        let note = format!("ganger: no warm agent for this round, so it runs cold: {why}\n");
        let _ = err.write_all(redactor.redact_str(&note).as_bytes());
    }
    if stopped_warm {
        let _ = err.write_all(
            b"ganger: the task's warm agent was stopped: this round runs cold in its session\n",
        );
    }
    Ok((raw, err))
}

/// Starts the threads that copy the agent's stdout and stderr into `streams` (redacted,
/// stdout parsed into `progress`); the receiver hears of each pipe's end.
fn start_readers(
    agent: &mut RunningAgent,
    streams: (Box<dyn Write + Send>, Box<dyn Write + Send>),
    redactor: &Redactor,
    adapter: &'static dyn Adapter,
    progress: &Arc<Mutex<Progress>>,
) -> mpsc::Receiver<Closed> {
    let (raw, err) = streams;
    let (closed_tx, closed_rx) = mpsc::channel();
    if let Some(stdout) = agent.take_stdout() {
        let (progress, closed, redactor, parser) = (
            Arc::clone(progress),
            closed_tx.clone(),
            redactor.clone(),
            adapter.stream_parser(),
        );
        std::thread::spawn(move || {
            output::read_stdout(stdout, raw, redactor, parser, progress, closed)
        });
    }
    if let Some(stderr) = agent.take_stderr() {
        let (closed, redactor, progress) =
            (closed_tx.clone(), redactor.clone(), Arc::clone(progress));
        std::thread::spawn(move || {
            output::read_stderr(stderr, err, redactor, adapter, progress, closed)
        });
    }
    closed_rx
}

/// How the round ended, judged by its adapter from what the agent reported.
fn judge(
    ws: &Workspace,
    input: &RoundInput,
    adapter: &dyn Adapter,
    progress: &Mutex<Progress>,
    redactor: &Redactor,
    exit: AgentExit,
    stop: Option<HostStop>,
) -> finish::Ended {
    let mut summary = match progress.lock() {
        Ok(shared) => shared.summary.clone(),
        Err(poisoned) => poisoned.into_inner().summary.clone(),
    };
    // The raw stream was redacted, but a parser decodes escapes and joins pieces of text: what
    // it made is redacted again before anything is judged, stored or written from it.
    redactor.redact_summary(&mut summary);
    let verdict_exit = match stop {
        Some(HostStop::Lingered(_)) => AgentExit::Code(0),
        _ => exit,
    };
    let permission = input.task.permission;
    let sandboxed = TaskSandbox::of(ws, &input.task).is_ok_and(|sandbox| sandbox.isolates());
    let verdict = adapter.round_verdict(&summary, verdict_exit, permission, sandboxed);
    finish::Ended {
        exit: Some(exit),
        summary,
        stop,
        verdict: Some(verdict),
        start_error: None,
        checks: Vec::new(),
    }
}

/// After the agent exited: stops whatever of the round is left (children it started, which
/// may hold its pipes open) and lets the readers finish.
fn drain(agent: &RunningAgent, closed: &mpsc::Receiver<Closed>, grace: Duration) {
    agent.stop_leftovers(grace);
    let deadline = Instant::now() + DRAIN_LIMIT;
    let mut open = 2;
    while open > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        match closed.recv_timeout(left) {
            Ok(_) => open -= 1,
            Err(_) => break,
        }
    }
}
