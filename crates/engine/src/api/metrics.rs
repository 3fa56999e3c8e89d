//! What an operator's metrics and health endpoint read (`ganger serve|worker --metrics`,
//! docs/operations.md): the queue by state, the rounds by agent and status with their
//! durations, the warm agents with their memory, the finished rounds whose work waits to be
//! pushed to their fleet's remote, and whether the process's own claim in the store (a
//! worker's, or serve's scheduler's) lives and how many items it holds under it. Each read is the store's truth at that
//! moment, so that any number of scrapers, and a process restarted, say the same.

use crate::api::Engine;
use ganger_events::RoundStatus;
pub use ganger_store::ClaimKey;
use ganger_store::{Backend, QueueItem, QueueKind, QueueState, RoundTally};
use std::time::{Duration, Instant};

/// The upper bounds of the round duration histogram's buckets, in seconds: a scripted round
/// takes under a second, an agent's real work minutes to an hour.
pub const ROUND_SECONDS_BOUNDS: &[u64] = &[1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

/// Every queue state, in the order the metrics list them.
pub const QUEUE_STATES: &[QueueState] = &[
    QueueState::Queued,
    QueueState::Delivering,
    QueueState::Delivered,
    QueueState::Ended,
    QueueState::Refused,
    QueueState::Stale,
];

/// A process's own claim in the store (a worker's, or serve's scheduler's), and what it holds
/// under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimMetrics {
    /// Whether the store holds the claim alive (a lease not run out, a lock held).
    pub held: bool,
    /// The queue items being delivered or delivered under it: the rounds it answers for.
    pub items: u64,
}

/// A warm agent as the metrics count it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarmMetric {
    pub agent: String,
    /// The resident memory of its processes; 0 where it cannot be read.
    pub memory_bytes: u64,
}

/// One scrape's reading.
#[derive(Debug, Clone)]
pub struct FleetMetrics {
    /// How long the store took to answer a ping at this scrape.
    pub store_ping: Duration,
    /// Items in each of [`QUEUE_STATES`], zeros included.
    pub queue: Vec<(QueueState, u64)>,
    /// The rounds by agent and status, timed against [`ROUND_SECONDS_BOUNDS`].
    pub rounds: Vec<RoundTally>,
    pub warm: Vec<WarmMetric>,
    /// Delivered items whose round has ended and whose fleet names a remote: the rounds whose
    /// work waits for its push there before the item ends (a push that fails is tried again).
    pub pushes_pending: u64,
    /// The claim's reading, for a process that holds one.
    pub claim: Option<ClaimMetrics>,
}

/// Whether the process can do its work: its store answers, and its claim (if it holds one)
/// lives. `Err` says what is wrong, in one line.
pub type Health = std::result::Result<Duration, String>;

impl Engine {
    /// Reads the metrics; `claim` is the process's own claim, if it holds one. An error is
    /// the store's failure, in one line.
    pub fn fleet_metrics(
        &self,
        claim: Option<&ClaimKey>,
    ) -> std::result::Result<FleetMetrics, String> {
        let (store, store_ping) = self.ping_store()?;
        let failed = |e: ganger_store::StoreError| format!("the store failed: {e}");
        let counts = store.queue_counts(None).map_err(failed)?;
        let queue = QUEUE_STATES
            .iter()
            .map(|state| {
                let n = counts.iter().find(|(s, _)| s == state).map_or(0, |c| c.1);
                (*state, n)
            })
            .collect();
        let bounds_ms: Vec<u64> = ROUND_SECONDS_BOUNDS.iter().map(|s| s * 1000).collect();
        let rounds = store.round_tallies(&bounds_ms).map_err(failed)?;
        let in_flight = store
            .items_in(
                &[QueueState::Delivering, QueueState::Delivered],
                0,
                u32::MAX,
            )
            .map_err(failed)?;
        let pushes_pending = pushes_pending(&*store, &in_flight).map_err(failed)?;
        let claim = match claim {
            Some(key) => Some(ClaimMetrics {
                held: store.is_alive(key).map_err(failed)?,
                items: count(
                    in_flight
                        .iter()
                        .filter(|item| item.claimed_by.as_deref() == Some(key.as_str())),
                ),
            }),
            None => None,
        };
        let warm = crate::round::warm::list_warm(self.workspace(), &*store)
            .into_iter()
            .map(|info| WarmMetric {
                memory_bytes: info.memory_bytes(),
                agent: info.agent,
            })
            .collect();
        Ok(FleetMetrics {
            store_ping,
            queue,
            rounds,
            warm,
            pushes_pending,
            claim,
        })
    }

    /// Whether the store answers and `claim` (the process's own, if any) lives; the store's
    /// answer time when both hold.
    pub fn health(&self, claim: Option<&ClaimKey>) -> Health {
        let (store, ping) = self.ping_store()?;
        if let Some(key) = claim {
            match store.is_alive(key) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(format!(
                        "this process's claim in the store ({key}) is not held: it ran out \
                         while the store was cut off, or was taken over"
                    ));
                }
                Err(e) => return Err(format!("the store failed: {e}")),
            }
        }
        Ok(ping)
    }

    /// Opens the store and times one cheap read of it.
    fn ping_store(&self) -> std::result::Result<(Box<dyn Backend>, Duration), String> {
        let began = Instant::now();
        let store = self.workspace().open_store().map_err(|e| match &e.cause {
            Some(cause) => format!("the store cannot be opened: {}: {cause}", e.message),
            None => format!("the store cannot be opened: {}", e.message),
        })?;
        store
            .data_version()
            .map_err(|e| format!("the store does not answer: {e}"))?;
        Ok((store, began.elapsed()))
    }
}

/// Of the items `in_flight`, those delivered whose round has ended and whose fleet (the
/// item's, or for a fix queued by hand its task's) names a remote.
fn pushes_pending(
    store: &dyn Backend,
    in_flight: &[QueueItem],
) -> std::result::Result<u64, ganger_store::StoreError> {
    let with_remote: Vec<String> = store
        .fleets()?
        .into_iter()
        .filter(|fleet| fleet.remote.is_some())
        .map(|fleet| fleet.name)
        .collect();
    if with_remote.is_empty() {
        return Ok(0);
    }
    let mut pending = 0;
    for item in in_flight
        .iter()
        .filter(|i| i.state == QueueState::Delivered)
    {
        let Some(task) = store.task(&item.slug)? else {
            continue;
        };
        let fleet = match (&item.fleet, item.kind) {
            (Some(fleet), _) => Some(fleet.clone()),
            (None, QueueKind::Start) => None,
            (None, _) => store.task_fleet(task.id)?,
        };
        if !fleet.is_some_and(|fleet| with_remote.contains(&fleet)) {
            continue;
        }
        let ended = store
            .round(task.id, item.round)?
            .is_some_and(|round| round.status != RoundStatus::Running);
        pending += u64::from(ended);
    }
    Ok(pending)
}

fn count<T>(items: impl Iterator<Item = T>) -> u64 {
    u64::try_from(items.count()).unwrap_or(u64::MAX)
}
