//! The host's part of checks: once the agent said it is done, each of the round's checks runs
//! with `sh -c` in the task's worktree, in the task's sandbox, marked as the round's process
//! (so that a cancel, the reaper and `ganger clean` find it like the agent), with its time
//! limit; its output, redacted of the round's keys, goes to `round-N.check-NAME.log` and its
//! tail to the store.

use super::finish::{HostStop, cancel_requested, stop_for_signal};
use super::setup::{RoundInput, adapter_of, create};
use super::signals::SignalWatch;
use crate::base::error::Result;
use crate::base::redact::Redactor;
use crate::env::sandboxing::{Confinement, TaskSandbox, confine_check, sandbox_environment};
use crate::env::workspace::Workspace;
use crate::evidence::checks::{Capture, tail};
use ganger_agents::{CommandPlan, Permission};
use ganger_sandbox::{AgentCommand, RunningAgent, Waited, spawn_local};
use ganger_store::{CheckResult, CheckRun, Store};
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// How often the store is asked whether a cancel was requested while a check runs.
const CANCEL_POLL: Duration = Duration::from_secs(1);
/// How long the host waits for a check's pipes to close after it exited.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// Runs the round's checks in order; stops at a cancel or a stop signal, which it returns
/// (the checks not run keep no result).
pub(crate) fn run_checks(
    ws: &Workspace,
    store: &mut dyn Store,
    input: &RoundInput,
    redactor: &Redactor,
) -> (Vec<CheckRun>, Option<HostStop>) {
    let mut checks = input.round.checks.clone();
    let signals = match SignalWatch::install() {
        Ok(signals) => signals,
        Err(_) => return (checks, None),
    };
    // A round whose only way out is its gateway: its checks reach the allow-list through a
    // gateway of their own (the agent's has ended), and nothing else.
    let gateway = super::gateway::open_for_checks(ws, input);
    let redirect = match &gateway {
        Ok(Some((_, redirect))) => Some(redirect),
        _ => None,
    };
    for check in &mut checks {
        let ran = match &gateway {
            Err(error) => Err(error.clone()),
            Ok(_) => run_one(ws, store, input, &signals, check, redactor, redirect),
        };
        match ran {
            Ok((result, None)) => check.result = Some(result),
            Ok((result, Some(stop))) => {
                check.result = Some(result);
                return (checks, Some(stop));
            }
            Err(error) => {
                check.result = Some(CheckResult {
                    passed: false,
                    exit_code: None,
                    signal: None,
                    timed_out: false,
                    duration_ms: 0,
                    tail: format!("the check could not run: {}", error.message),
                    log: log_path(ws, input, &check.name),
                });
            }
        }
    }
    (checks, None)
}

fn log_path(ws: &Workspace, input: &RoundInput, name: &str) -> std::path::PathBuf {
    ws.state.round_file(
        &input.task.slug,
        input.round.number,
        &format!("check-{name}.log"),
    )
}

/// The check's command, before its sandbox: the user's environment locally, without ganger's
/// own (checks are the project's own commands, run as a person would), a sandbox's clean one
/// without keys.
fn check_command(
    ws: &Workspace,
    input: &RoundInput,
    c: &Confinement<'_>,
    check: &CheckRun,
) -> Result<AgentCommand> {
    let task = &input.task;
    let env: Vec<(OsString, OsString)> = if c.sandbox.isolates() {
        let adapter = adapter_of(ws, task)?;
        let nothing = CommandPlan::new(Vec::new(), Vec::new(), None);
        sandbox_environment(adapter, &ws.config, &nothing, &[], c.home, &task.worktree)
    } else {
        crate::env::agent_env::user_environment()
    };
    Ok(AgentCommand {
        program: "/bin/sh".into(),
        // One stream for both, so that the log and the tail keep the order they came in.
        args: vec!["-c".into(), format!("exec 2>&1\n{}", check.command).into()],
        env,
        cwd: task.worktree.clone(),
        stdin: None,
        token: input.round.token.clone(),
        use_cgroup: false,
    })
}

fn run_one(
    ws: &Workspace,
    store: &mut dyn Store,
    input: &RoundInput,
    signals: &SignalWatch,
    check: &CheckRun,
    redactor: &Redactor,
    redirect: Option<&super::gateway::Redirect>,
) -> Result<(CheckResult, Option<HostStop>)> {
    let task = &input.task;
    let sandbox = TaskSandbox::of(ws, task)?;
    let home = if sandbox.isolates() {
        ws.state.task_agent_dir(&task.slug)
    } else {
        ws.state.root().to_path_buf()
    };
    let writable = task.permission == Permission::Write;
    let confinement = Confinement {
        sandbox: &sandbox,
        task,
        round: input.round.number,
        home: &home,
        writable,
        grace: input.grace,
        gateway: redirect.and_then(|r| r.door.as_ref()),
    };
    let mut command = check_command(ws, input, &confinement, check)?;
    if let Some(redirect) = redirect {
        command.env.extend(
            redirect
                .vars
                .iter()
                .map(|var| (OsString::from(&var.env), OsString::from(&var.value))),
        );
    }
    let command = confine_check(ws, &confinement, command)?;
    let log = log_path(ws, input, &check.name);
    let capture = Capture::new(create(&log)?, redactor.clone());
    let started = Instant::now();
    let mut running = spawn_local(&command)?;
    let readers = capture.follow_output(&mut running);
    let limit = Duration::from_millis(check.timeout_ms);
    let (exit, timed_out, stop) = follow(store, input, signals, &mut running, started, limit);
    running.stop_leftovers(input.grace);
    let deadline = Instant::now() + DRAIN_LIMIT;
    for reader in readers {
        while !reader.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let result = CheckResult {
        passed: !timed_out && stop.is_none() && exit.code == Some(0),
        exit_code: exit.code,
        signal: exit.signal,
        timed_out,
        duration_ms: started.elapsed().as_millis() as u64,
        tail: tail(&capture.last()),
        log,
    };
    Ok((result, stop))
}

/// Waits for the check, stopping it at its time limit or at a cancel or stop signal.
fn follow(
    store: &mut dyn Store,
    input: &RoundInput,
    signals: &SignalWatch,
    running: &mut RunningAgent,
    started: Instant,
    limit: Duration,
) -> (ganger_sandbox::AgentExit, bool, Option<HostStop>) {
    let mut last_poll = started;
    loop {
        let left = limit.saturating_sub(started.elapsed());
        if left.is_zero() {
            return (running.stop(input.grace), true, None);
        }
        let stop = match running.wait_timeout(left.min(CANCEL_POLL), Some(signals.fd())) {
            Waited::Exited(exit) => return (exit, false, None),
            Waited::Woken => signals
                .received()
                .map(|signal| stop_for_signal(store, input, signal)),
            Waited::TimedOut => None,
        };
        let stop = stop.or_else(|| {
            (last_poll.elapsed() >= CANCEL_POLL && {
                last_poll = Instant::now();
                cancel_requested(store, input)
            })
            .then_some(HostStop::Cancelled)
        });
        if let Some(stop) = stop {
            return (running.stop(input.grace), false, Some(stop));
        }
    }
}
