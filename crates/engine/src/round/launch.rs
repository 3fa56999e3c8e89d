//! Starting a round once its task exists or is about to: the round's claim (its liveness, in
//! the store) is taken before the round is recorded (so a running round always has a
//! holder), the prompt file is written, and the round runs here in the foreground or in a
//! detached host that the claim is handed over to.

use crate::base::error::{EngineError, Result};
use crate::base::notice::{Notice, Notices};
use crate::base::redact::Redactor;
use crate::env::workspace::Workspace;
use crate::round::{HostOutcome, RoundInput, run_host};
use ganger_events::RoundStatus;
use ganger_sandbox::{ProcessId, spawn_round_host};
use ganger_store::{
    Backend, CheckRun, Claim, Liveness, NewRound, ProcessRef, Round, RoundEnd, RoundKind, Store,
    StoreError, Task,
};
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// How a launched round went.
#[derive(Debug, Clone)]
pub enum Launched {
    /// The round ran here and ended.
    Finished(HostOutcome),
    /// The round runs in a detached host.
    Detached {
        task: Task,
        round: Round,
        host_pid: u32,
    },
}

/// This process, as the host recorded with a new round.
pub(crate) fn this_process() -> Option<ProcessRef> {
    ProcessId::current().map(|p| ProcessRef {
        pid: p.pid,
        start_ticks: p.start_ticks,
    })
}

/// Claims the work named `name` (a new round's token) for this process.
pub(crate) fn take_claim(store: &dyn Liveness, name: &str) -> Result<Claim> {
    Ok(store.claim(name)?)
}

/// A round about to begin: what its record says (the token, claim and host are `begin`'s),
/// and how it runs.
pub(crate) struct Begin {
    pub kind: RoundKind,
    pub model: Option<String>,
    pub session_before: Option<String>,
    pub commander: String,
    pub checks: Vec<CheckRun>,
    pub generation: Option<i64>,
    pub prompt: String,
    /// Removes the run's keys from the prompt file.
    pub redactor: Redactor,
    pub detach: bool,
    /// `--until-green N`, carried to a detached host, which runs the loop.
    pub until_green: Option<u32>,
}

/// The one beginning of every round (a task's first, a fix, a pipeline role's): a fresh token
/// and its claim are taken (the round's liveness, held before the round is recorded, so a
/// running round always has a holder), `record` writes the round (with its task, for a first
/// round) in the store, and the round is launched. A round `record` refuses releases its
/// claim and leaves nothing behind.
pub(crate) fn begin(
    ws: &Workspace,
    store: &mut dyn Backend,
    begin: Begin,
    record: impl FnOnce(&mut dyn Backend, &NewRound, &mut dyn Notices) -> Result<(Task, Round)>,
    notices: &mut dyn Notices,
) -> Result<Launched> {
    let token = crate::base::tokens::new_token();
    let claim = take_claim(&*store, &token)?;
    let new_round = NewRound {
        kind: begin.kind,
        model: begin.model,
        session_before: begin.session_before,
        commander: begin.commander,
        token,
        claim: claim.key().clone(),
        // A round run here is hosted by this process. A detached one is not: its host is
        // named once spawned (by this process, and by the host itself), and until then a
        // cancel signals nobody (SIGTERM to this command, `ganger serve` delivering it, would
        // kill the command instead of the round).
        host: if begin.detach { None } else { this_process() },
        snapshot_before: None,
        checks: begin.checks,
        generation: begin.generation,
    };
    let (task, round) = match record(store, &new_round, notices) {
        Ok(recorded) => recorded,
        Err(e) => {
            claim.release();
            return Err(e);
        }
    };
    launch(
        ws,
        store,
        Launch {
            task,
            round,
            prompt: begin.prompt,
            claim,
            redactor: begin.redactor,
            detach: begin.detach,
            until_green: begin.until_green,
        },
        notices,
    )
}

/// How long a command whose round may have been recorded without its hearing so waits for
/// the store to answer whether it was.
const RECORDED_PATIENCE: Duration = Duration::from_secs(30);

/// Whether the round `token` of task `slug` was recorded although recording it failed with
/// `error`: a database connection cut as the transaction commits loses the answer, not the
/// commit (a worker's start during a PostgreSQL restart recorded its task and round, took the
/// error, and left the round to be found interrupted and the queued start refused as "exists
/// already"). Only for a store that could not be reached: asks it as soon as it answers
/// again, within [`RECORDED_PATIENCE`]; `None` when it says the round is not there, or never
/// answers.
pub(crate) fn recorded_anyway(
    store: &dyn Backend,
    error: &EngineError,
    slug: &str,
    token: &str,
) -> Option<(Task, Round)> {
    let unreachable = |e: &StoreError| matches!(e, StoreError::Unreachable { .. });
    let cause = error.cause.as_deref()?.downcast_ref::<StoreError>()?;
    if !unreachable(cause) {
        return None;
    }
    let deadline = Instant::now() + RECORDED_PATIENCE;
    loop {
        let found = store.task(slug).and_then(|task| match task {
            Some(task) => Ok(store.round(task.id, None)?.map(|round| (task, round))),
            None => Ok(None),
        });
        match found {
            Ok(found) => return found.filter(|(_, round)| round.token == token),
            Err(e) if unreachable(&e) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(_) => return None,
        }
    }
}

/// A recorded round, ready to run.
struct Launch {
    pub task: Task,
    pub round: Round,
    pub prompt: String,
    /// The round's claim, taken before the round was recorded.
    pub claim: Claim,
    /// Removes the run's keys from the prompt file.
    pub redactor: Redactor,
    pub detach: bool,
    /// `--until-green N`, carried to a detached host, which runs the loop.
    pub until_green: Option<u32>,
}

/// Runs a recorded round, in the foreground or detached.
fn launch(
    ws: &Workspace,
    store: &mut dyn Backend,
    launch: Launch,
    notices: &mut dyn Notices,
) -> Result<Launched> {
    let Launch {
        task,
        round,
        prompt,
        claim,
        redactor,
        detach,
        until_green,
    } = launch;
    // From here the round is recorded as running: a failure ends it as failed, with the
    // reason, rather than leaving it to be found interrupted.
    let fail = |store: &mut dyn Store, error: EngineError, claim: Claim| -> EngineError {
        let end = RoundEnd {
            status: RoundStatus::Failed,
            snapshot_before: None,
            reason: Some(format!("the round could not start: {}", error.message)),
            session: round.session_before.clone(),
            exit_code: None,
            exit_signal: None,
            summary: Default::default(),
            snapshot_after: None,
            changed: Vec::new(),
            worktree_changes: Vec::new(),
            checks: Vec::new(),
        };
        let _ = store.finish_round(round.id, &end);
        claim.release();
        error
    };
    let prompt_file = ws.state.round_file(&task.slug, round.number, "prompt.md");
    let written = prompt_file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&prompt_file, redactor.redact_str(&prompt)));
    if let Err(e) = written {
        return Err(fail(
            store,
            EngineError::io("write", &prompt_file, e),
            claim,
        ));
    }
    if detach {
        let program = match std::env::current_exe() {
            Ok(program) => program,
            Err(e) => {
                let error = EngineError::environment("cannot find ganger's own binary", e);
                return Err(fail(store, error, claim));
            }
        };
        let log = ws.state.round_file(&task.slug, round.number, "host.log");
        let mut args: Vec<OsString> = vec![
            "--directory".into(),
            ws.repo.main.clone().into(),
            "host".into(),
            task.slug.clone().into(),
            round.number.to_string().into(),
        ];
        if let Some(limit) = until_green {
            args.push("--until-green".into());
            args.push(limit.to_string().into());
        }
        let handover = claim.handover();
        args.push("--claim".into());
        args.push(handover.claim.to_arg());
        let handed = match ws.handed_store() {
            Ok(handed) => handed,
            Err(e) => return Err(fail(store, e, claim)),
        };
        let spawned = spawn_round_host(
            &program,
            &args,
            handover.inherit,
            &handed.env,
            &handed.input(prompt.as_bytes()),
            &log,
        );
        let host = match spawned {
            Ok(host) => host,
            Err(e) => return Err(fail(store, e.into(), claim)),
        };
        crate::base::faults::pause("launch-after-spawn");
        if let Some(stat) = ganger_sandbox::proc_stat(host.pid as i32) {
            let _ = store.record_host(
                round.id,
                ProcessRef {
                    pid: host.pid as i32,
                    start_ticks: stat.start_ticks,
                },
            );
        }
        // The host holds the claim now; this process lets its hold go without ending it.
        drop(claim);
        notices.notice(Notice::Detached {
            slug: task.slug.clone(),
            number: round.number,
            host_pid: host.pid,
            log,
        });
        return Ok(Launched::Detached {
            task,
            round,
            host_pid: host.pid,
        });
    }
    notices.notice(Notice::RoundStarted {
        slug: task.slug.clone(),
        number: round.number,
        events: ws.state.round_file(&task.slug, round.number, "jsonl"),
    });
    let input = RoundInput::new(ws, task, round, prompt);
    Ok(Launched::Finished(run_host(ws, store, input, claim, None)?))
}
