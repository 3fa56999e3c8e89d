//! The detached round host's entry point (`ganger host SLUG N --claim CLAIM`, hidden): it
//! takes over the round's claim the starting command handed it on its command line (with the
//! lock's descriptor, for SQLite), reads the prompt from its stdin, and runs the round that
//! command recorded.

use crate::base::error::{EngineError, ErrorKind, Result};
use crate::base::notice::Notice;
use crate::env::workspace::Workspace;
use crate::round::{HostOutcome, RoundInput, SignalWatch, run_host};
use crate::task::lookup::find_task;
use ganger_events::RoundStatus;
use ganger_store::HandedClaim;
use std::io::Read;
use std::time::{Duration, Instant};

/// How long a host just started waits for a store that fails under it (a database server
/// restarting, slowly on a loaded machine) before it gives up: as long as a pool that
/// reached its server keeps reconnecting. Waiting past the lease it was handed costs
/// nothing: the takeover then finds the lease gone and the host stops without running.
const PATIENCE: Duration = Duration::from_secs(30);

/// `step`, tried again while it fails for the environment, for at most [`PATIENCE`].
fn patiently<T>(mut step: impl FnMut() -> Result<T>) -> Result<T> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match step() {
            Err(e) if e.kind == ErrorKind::Environment && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(250));
            }
            other => return other,
        }
    }
}

/// Runs round `number` of `slug` as a detached host carrying the `handed` claim, then, with
/// `until_green`, the fix rounds its failing checks call for.
pub fn run_detached_host(
    ws: &Workspace,
    slug: &str,
    number: u32,
    until_green: Option<u32>,
    handed: Option<HandedClaim>,
) -> Result<HostOutcome> {
    // From the first step: a cancel's SIGTERM while the host starts ends the round cancelled
    // by the host itself (`run_host`), not the host.
    crate::base::faults::pause("host-first-step");
    let stops = SignalWatch::install().ok();
    // Started with them blocked (`spawn_round_host`): one sent meanwhile reaches the watch now.
    ganger_sandbox::unblock_stop_signals();
    let mut store = patiently(|| ws.open_store())?;
    let handed = handed.ok_or_else(|| {
        EngineError::invalid("`ganger host` is started by `ganger start/fix --detach`, not by hand")
    })?;
    crate::base::faults::pause("host-before-takeover");
    // A lease is renewed as it is taken over: a server away then is waited for as the store
    // was (a lock is a descriptor, taken once).
    let claim = match handed {
        HandedClaim::Lease { name, fence } => patiently(|| {
            Ok(store.inherited_claim(HandedClaim::Lease {
                name: name.clone(),
                fence,
            })?)
        })?,
        lock => store.inherited_claim(lock)?,
    };
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .map_err(|e| EngineError::environment("failed to read the prompt", e))?;
    let task = patiently(|| find_task(&*store, slug))?;
    let round = patiently(|| Ok(store.round(task.id, Some(number))?))?
        .ok_or_else(|| EngineError::not_found(format!("task {slug} has no round {number}")))?;
    if round.status != RoundStatus::Running {
        return Err(EngineError::invalid(format!(
            "round {number} of {slug} is not running"
        )));
    }
    // Taken before the first round can end, so that a `wait` never sees the loop's gap.
    let held = match until_green {
        Some(_) => Some(crate::task::rules::take_loop_claim(&*store, slug)?),
        None => None,
    };
    let input = RoundInput::new(ws, task, round, prompt);
    let outcome = run_host(ws, &mut *store, input, claim, stops)?;
    drop(store);
    let last = match until_green {
        Some(limit) => {
            crate::task::until_green::until_green(ws, outcome, limit, &mut |_: Notice| {})
        }
        None => Ok(outcome),
    };
    if let Some(held) = held {
        held.release();
    }
    last
}
