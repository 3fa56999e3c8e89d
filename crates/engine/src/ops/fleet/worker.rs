//! `ganger worker`: a scheduler that records itself in the store under a name, with what it
//! offers (its capacity, the agents it finds with their versions, its sandboxes), and takes
//! from the shared queue only the rounds it can run, no more at once than its capacity. Any
//! number run on one store (on one machine over SQLite, on many over PostgreSQL): each claims
//! the items it delivers under its own claim (`worker-NAME`, a lease on PostgreSQL), and takes
//! over those of a worker found dead. `ganger workers` lists them. Like `ganger serve`, a
//! worker keeps the warm agents its rounds start (`warm::keeper`): they end with it.

use super::events::{FleetEvent, FleetEvents};
use super::offer::Offer;
use super::scheduler::{Drained, SchedulerOptions, run_scheduler_as};
use crate::base::error::{EngineError, Result};
use crate::env::machine::host_name;
use crate::env::workspace::Workspace;
use ganger_events::SandboxKind;
use ganger_store::{StoreError, WorkerAgent, WorkerRecord, now_ms};
use serde::Serialize;

/// How `ganger worker` was asked to run.
#[derive(Debug, Clone, Default)]
pub struct WorkerOptions {
    /// Its name; the host's name when not given.
    pub name: Option<String>,
    pub capacity: usize,
    /// The sandbox kinds it runs rounds in; empty: those this machine has.
    pub sandboxes: Vec<String>,
}

/// A worker as `ganger workers` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerStatus {
    #[serde(flatten)]
    pub record: WorkerRecord,
    /// Whether its claim lives: a worker killed outright is listed until one of its name
    /// starts again.
    pub alive: bool,
}

/// Every worker recorded in the store, alive or not. A dead worker runs nothing: its load
/// is 0, not the last one it recorded (what it had taken, others take over).
pub fn list_workers(ws: &Workspace) -> Result<Vec<WorkerStatus>> {
    let store = ws.open_store()?;
    store
        .workers()?
        .into_iter()
        .map(|mut record| {
            let alive = store.is_alive(&record.claim)?;
            if !alive {
                record.load = 0;
            }
            Ok(WorkerStatus { record, alive })
        })
        .collect()
}

/// Runs a worker until it fails (it runs forever otherwise). Bad input (a name or sandbox
/// that cannot be, a capacity of 0, a name a live worker has) is refused before anything is
/// recorded. `ready` is told the worker's claim once it is held and recorded, before any
/// round is taken: a front end starts what watches it then (`--metrics`), and an error of
/// `ready`'s ends the worker with nothing taken.
pub fn run_worker(
    ws: &Workspace,
    options: WorkerOptions,
    mut scheduler: SchedulerOptions,
    ready: &mut dyn FnMut(&ganger_store::ClaimKey) -> Result<()>,
    events: &mut dyn FleetEvents,
) -> Result<Drained> {
    let host = host_name();
    let name = options.name.clone().unwrap_or_else(|| host.clone());
    check_name(&name)?;
    if options.capacity == 0 {
        return Err(EngineError::invalid("--capacity must be at least 1"));
    }
    let sandboxes = if options.sandboxes.is_empty() {
        sandboxes_here()
    } else {
        let read = |kind: &String| {
            kind.parse::<SandboxKind>().map_err(|_| {
                EngineError::invalid(format!(
                    "unknown sandbox {kind}: a worker offers local, bwrap or docker"
                ))
            })
        };
        options.sandboxes.iter().map(read).collect::<Result<_>>()?
    };
    let agents = agents_here(ws);
    let mut store = ws.open_store()?;
    let me = match store.claim(&format!("worker-{name}")) {
        Ok(claim) => claim,
        Err(StoreError::ClaimHeld { .. }) => {
            return Err(
                EngineError::conflict(format!("a worker named {name} is running already"))
                    .hint("give this one another name with --name"),
            );
        }
        Err(e) => return Err(e.into()),
    };
    let now = now_ms();
    store.register_worker(&WorkerRecord {
        name: name.clone(),
        host,
        pid: std::process::id(),
        capacity: u32::try_from(options.capacity).unwrap_or(u32::MAX),
        agents: agents.clone(),
        sandboxes: sandboxes.clone(),
        claim: me.key().clone(),
        started_at: now,
        seen_at: now,
        load: 0,
    })?;
    ready(me.key())?;
    // The warm agents its rounds start are the worker's, under the caps `serve`'s are
    // ([warm] max, memory), and end with it; unless a `serve` or another worker on this
    // checkout keeps them already.
    let _keeper = crate::round::warm::start_keeper_unless_kept(ws)?;
    events.event(FleetEvent::Ready {
        capacity: options.capacity,
        pid: std::process::id(),
    });
    scheduler.offer = Some(Offer {
        name,
        capacity: options.capacity,
        agents: agents.into_iter().map(|agent| agent.name).collect(),
        sandboxes,
    });
    run_scheduler_as(ws, store, me, scheduler, events)
}

/// A worker's name: what a claim and a listing can carry.
fn check_name(name: &str) -> Result<()> {
    let fits = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fits {
        Ok(())
    } else {
        Err(EngineError::invalid(format!(
            "worker name {name:?} is not 1 to 64 letters, digits, '-', '_' or '.'"
        )))
    }
}

/// The sandboxes this machine has: local always, bubblewrap and Docker when their programs
/// are there.
fn sandboxes_here() -> Vec<SandboxKind> {
    let mut kinds = vec![SandboxKind::Local];
    let on_path = |program: &str| {
        crate::env::agent_env::find_executable(std::path::Path::new(program)).is_some()
    };
    for kind in [SandboxKind::Bwrap, SandboxKind::Docker] {
        if on_path(kind.as_str()) {
            kinds.push(kind);
        }
    }
    kinds
}

/// The agents this worker can run: each whose program is found as a round would find it,
/// with its version (cached by the program's identity, as admission reads it; the first
/// look runs each version command, in parallel).
fn agents_here(ws: &Workspace) -> Vec<WorkerAgent> {
    std::thread::scope(|scope| {
        let looks: Vec<_> = ganger_agents::names()
            .into_iter()
            .map(|name| {
                scope.spawn(move || {
                    let adapter = crate::env::agent_env::adapter_for(name, &ws.config)?;
                    let program =
                        crate::env::agent_env::resolve_program(adapter, &ws.config).ok()?;
                    let version = adapter
                        .package()
                        .is_some()
                        .then(|| {
                            crate::env::agents::cached_version(
                                adapter,
                                &program,
                                &ws.state.cache_dir(),
                            )
                        })
                        .flatten();
                    Some(WorkerAgent {
                        name: name.to_owned(),
                        version,
                    })
                })
            })
            .collect();
        looks
            .into_iter()
            .filter_map(|look| look.join().ok().flatten())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_name_is_what_a_claim_and_a_listing_can_carry() {
        for good in ["a", "build-1", "host.example_2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", "x/y", &"n".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
