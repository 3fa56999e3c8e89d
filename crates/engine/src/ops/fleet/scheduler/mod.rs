//! The scheduler: one loop that owns what the user sees, fed by messages over one channel
//! (nextest's dispatcher shape): a thread per running round blocks on the round's host lock
//! and says when it ends; between messages the loop wakes every `poll` to read the queue.
//!
//! Each pass (`pass` below) settles dead rounds, takes over the items of schedulers found
//! dead (`recovery.rs`), looks at how the rounds it started ended (`review.rs`: a rate limit
//! pauses the model and requeues the task), reads a view of the store (`view.rs`: the rounds
//! running, the items in flight, the pauses and the limits; the truth, so a restarted
//! scheduler decides the same), and walks the queue with the plan (`plan.rs`, pure, tested
//! as tables), whose actions the executor (`execute.rs`) carries out: it claims, refuses and
//! delivers items (here on threads, or by a fleet remote's lane, `../lanes.rs`, off the loop).
//!
//! The loop keeps no state the store does not have: killed at any moment, a new scheduler
//! finds claimed items (`delivering`) and works out from the rounds whether their round was
//! recorded, so every round asked for runs once.

mod execute;
mod packing;
mod plan;
mod recovery;
mod review;
mod view;

pub(crate) use plan::conflict_hold;
pub(crate) use view::conflict_pairs;
use view::{Defaults, View};

use super::events::{FleetEvent, FleetEvents};
use super::lanes::Lanes;
use super::limits::Limits;
use super::offer::Offer;
use crate::base::config::ConflictPolicy;
use crate::base::error::Result;
use crate::base::notice::Notice;
use crate::env::workspace::Workspace;
use crate::round::reaper::settle_running;
use ganger_events::RoundStatus;
use ganger_store::{Backend, Claim, ClaimKey, QueueItem, QueueState, now_ms};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// How long an item is sent again while the environment fails its delivery (a database
/// restarting, a disk full for a moment) before it is refused with the failure.
const ENVIRONMENT_PATIENCE: Duration = Duration::from_secs(120);

/// How often a worker records that it is alive and its load.
const SEEN_EVERY: Duration = Duration::from_secs(2);

/// How often a scheduler that serves forever counts the queue for its status line.
const COUNT_EVERY: Duration = Duration::from_secs(1);

/// The items a scheduler reads whole at every pass: those some scheduler is delivering or
/// has delivered.
const IN_FLIGHT: &[QueueState] = &[QueueState::Delivering, QueueState::Delivered];

/// When the loop stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drain {
    /// Never (`ganger serve`).
    Forever,
    /// Once the fleet has nothing open (`ganger fleet run`).
    Fleet(String),
}

/// How the scheduler runs.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// Limits on every round it starts (a fleet's own limits apply to its items as well).
    pub limits: Limits,
    /// The first pause after a rate limit; it doubles with each one in a row.
    pub backoff: Duration,
    /// How often the queue is read when nothing else wakes the loop.
    pub poll: Duration,
    pub drain: Drain,
    /// What this scheduler offers when it is a worker (`ganger worker`): it takes only the
    /// items it can run, and no more at once than its capacity.
    pub offer: Option<Offer>,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            limits: Limits::default(),
            backoff: Duration::from_secs(5),
            poll: Duration::from_millis(200),
            drain: Drain::Forever,
            offer: None,
        }
    }
}

/// What wakes the loop.
#[derive(Debug)]
enum Message {
    /// A round's host let its lock go.
    RoundEnded,
    /// Work was queued or put back (a backend that says so).
    Queued,
    /// A remote's lane finished a job (a delivery from its clone, a push).
    LaneFinished,
}

/// How often the queue is read at least when the backend says when work is queued: the
/// rest (a dead scheduler's items, a pause that ends) is found by this poll.
const NOTIFIED_POLL: Duration = Duration::from_secs(2);

/// A fleet run's totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Drained {
    pub started: usize,
    pub refused: usize,
    /// Wall time spent deciding (passes without the deliveries themselves), for the benchmark.
    pub deciding_ms: u64,
    pub passes: u64,
}

struct Scheduler<'a> {
    ws: &'a Workspace,
    store: Box<dyn ganger_store::Backend>,
    /// This scheduler's claim: the items it claims are recorded under it, and whoever finds
    /// it dead takes them over.
    me: Claim,
    options: SchedulerOptions,
    tx: Sender<Message>,
    rx: Receiver<Message>,
    /// Rounds the store watches for the loop, by their host's claim.
    watched: HashSet<ClaimKey>,
    totals: Drained,
    deciding: Duration,
    /// The rounds this scheduler ran at its last pass (being delivered, or running).
    load: usize,
    /// The items in each state (of its fleet, when it drains one) at the end of the last pass.
    counted: Option<Vec<(QueueState, u64)>>,
    /// When a scheduler that serves forever last counted the queue (for its status line).
    counted_at: Option<Instant>,
    /// When a pass last looked for finished rounds' streams to pack (`packing.rs`).
    packed_at: Option<Instant>,
    /// Items whose delivery met a failure of the environment, since when (in a row).
    unavailable: HashMap<i64, Instant>,
    /// The lanes of the fleets' remotes this scheduler delivers from (their clones, fetches,
    /// pushes), off this loop.
    lanes: Lanes,
    /// This scheduler's items a lane is delivering.
    in_lanes: HashSet<i64>,
    /// The queued items told held (`serialize`), with why, so that each is told once.
    held: HashMap<i64, String>,
    /// Items whose task's push a lane is making.
    pushing: HashSet<i64>,
    /// How the pushes the lanes made went, by item, until the item's review reads them.
    pushes: HashMap<i64, Result<()>>,
    /// Each fleet's remote, by the fleet's name, as the last pass read them.
    remotes: BTreeMap<String, String>,
}

/// Runs the scheduler until `options.drain` says it is done.
pub fn run_scheduler(
    ws: &Workspace,
    options: SchedulerOptions,
    events: &mut dyn FleetEvents,
) -> Result<Drained> {
    let store = ws.open_store()?;
    let me = store.claim(&format!("scheduler-{}", crate::base::tokens::new_token()))?;
    run_scheduler_as(ws, store, me, options, events)
}

/// Runs the scheduler holding `me` (a worker's claim, or one of its own) until
/// `options.drain` says it is done. Several may run on one store: each claims the items it
/// delivers under `me`, follows its own, and takes over those of a scheduler found dead.
pub fn run_scheduler_as(
    ws: &Workspace,
    store: Box<dyn ganger_store::Backend>,
    me: Claim,
    options: SchedulerOptions,
    events: &mut dyn FleetEvents,
) -> Result<Drained> {
    let (tx, rx) = channel();
    let lane_tx = tx.clone();
    let wake: std::sync::Arc<dyn Fn() + Send + Sync> = std::sync::Arc::new(move || {
        let _ = lane_tx.send(Message::LaneFinished);
    });
    let mut last_seen: Option<Instant> = None;
    let mut scheduler = Scheduler {
        ws,
        store,
        me,
        options,
        tx,
        rx,
        watched: HashSet::new(),
        totals: Drained::default(),
        deciding: Duration::ZERO,
        load: 0,
        counted: None,
        counted_at: None,
        packed_at: None,
        unavailable: HashMap::new(),
        lanes: Lanes::new(ws, wake),
        in_lanes: HashSet::new(),
        held: HashMap::new(),
        pushing: HashSet::new(),
        pushes: HashMap::new(),
        remotes: BTreeMap::new(),
    };
    let queue_tx = scheduler.tx.clone();
    let notified = scheduler
        .store
        .when_queue_changes(Box::new(move || queue_tx.send(Message::Queued).is_ok()))
        .unwrap_or(false);
    if notified {
        scheduler.options.poll = scheduler.options.poll.max(NOTIFIED_POLL);
    }
    loop {
        // A scheduler whose own lease ran out (cut off from the store for longer than it
        // lasts) has had its items taken over by others: it stops rather than deliver more
        // under a claim the others hold dead.
        if scheduler.me.lost() {
            // A test's window: the process lives on a while with its claim lost.
            crate::base::faults::pause("scheduler-claim-lost");
            return Err(crate::base::error::EngineError::environment(
                "this scheduler's claim in the store ran out while it was cut off; the rounds \
                 it had claimed are others' now",
                std::io::Error::from(std::io::ErrorKind::TimedOut),
            ));
        }
        // A daemon outlives a failed pass (the next one starts from the store again); a
        // fleet run reports it and stops.
        let wake = match scheduler.pass(events) {
            Ok(wake) => wake,
            Err(e) if scheduler.options.drain == Drain::Forever => {
                events.event(FleetEvent::Trouble { message: e.message });
                None
            }
            Err(e) => return Err(e),
        };
        scheduler.say_seen(&mut last_seen);
        if scheduler.drained()? {
            scheduler.totals.deciding_ms = scheduler.deciding.as_millis() as u64;
            let Scheduler { me, totals, .. } = scheduler;
            // Ended, not died: its claim goes (on SQLite, with its lock file).
            me.release();
            return Ok(totals);
        }
        let wait = wake.map_or(scheduler.options.poll, |w| w.min(scheduler.options.poll));
        match scheduler.rx.recv_timeout(wait) {
            Ok(Message::RoundEnded | Message::Queued | Message::LaneFinished)
            | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {}
        }
        // Several rounds may have ended at once: one pass sees them all.
        while scheduler.rx.try_recv().is_ok() {}
    }
}

/// Marks `item`, being delivered, delivered: its round is round `round` of its task.
fn mark_delivered(store: &mut dyn Backend, item: &QueueItem, round: u32) -> Result<()> {
    store.move_item(
        item.id,
        QueueState::Delivering,
        QueueState::Delivered,
        None,
        Some(round),
    )?;
    Ok(())
}

/// Ends `item`, delivered, with its round's status (`None`: its task or round is gone).
pub(super) fn mark_ended(
    store: &mut dyn Backend,
    item: &QueueItem,
    status: Option<RoundStatus>,
) -> Result<()> {
    store.move_item(
        item.id,
        QueueState::Delivered,
        QueueState::Ended,
        status.map(RoundStatus::as_str),
        None,
    )?;
    Ok(())
}

impl Scheduler<'_> {
    /// A worker says it is alive, with its load, at most every [`SEEN_EVERY`].
    fn say_seen(&mut self, last: &mut Option<Instant>) {
        let Some(offer) = &self.options.offer else {
            return;
        };
        if last.is_some_and(|at| at.elapsed() < SEEN_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        let load = u32::try_from(self.load).unwrap_or(u32::MAX);
        let _ = self.store.worker_seen(&offer.name, load);
    }

    /// Whether a fleet run is done: none of its items open when the last pass counted them
    /// (its last step).
    fn drained(&self) -> Result<bool> {
        Ok(match &self.options.drain {
            Drain::Forever => false,
            Drain::Fleet(name) => {
                let counts = match &self.counted {
                    Some(counts) => counts.clone(),
                    None => self.store.queue_counts(Some(name))?,
                };
                !counts.iter().any(|(state, n)| state.is_open() && *n > 0)
            }
        })
    }

    /// Has the store say (on the loop's channel) when the round whose host holds `claim`
    /// ends.
    fn watch(&mut self, claim: ClaimKey) {
        if !self.watched.insert(claim.clone()) {
            return;
        }
        let tx = self.tx.clone();
        let told = self.store.when_ended(
            &claim,
            Box::new(move || {
                let _ = tx.send(Message::RoundEnded);
            }),
        );
        if told.is_err() {
            // Not watched: the poll finds the end instead.
        }
    }

    /// One pass; returns how soon a pause or a `not_before` wants the next one.
    fn pass(&mut self, events: &mut dyn FleetEvents) -> Result<Option<Duration>> {
        let began = Instant::now();
        self.counted = None;
        self.lanes_finished(events)?;
        settle_running(self.ws, &mut *self.store, &mut |_: Notice| {})?;
        let running = self.store.running_rounds()?;
        self.watched
            .retain(|claim| running.iter().any(|(_, r)| &r.claim == claim));
        for (_, round) in &running {
            self.watch(round.claim.clone());
        }
        let fleets = self.store.fleets()?;
        self.remotes = view::remotes(&fleets);
        // The items in flight (being delivered, delivered) are all read: a few per slot of
        // every scheduler. The queued ones are read as the plan walks them.
        let busy: BTreeSet<String> = running.iter().map(|(task, _)| task.slug.clone()).collect();
        let in_flight = self.in_flight(events)?;
        let in_flight = self.review_ended(in_flight, &busy, events)?;
        let config = &self.ws.config;
        let mut view = View {
            limits: self.options.limits.clone(),
            offer: self.options.offer.clone(),
            defaults: Defaults {
                agent: config.defaults.agent.clone(),
                model: config.defaults.model.clone(),
                sandbox: config.sandbox.default.value().ok(),
            },
            ..View::read(
                &*self.store,
                &running,
                &fleets,
                &in_flight,
                self.me.key().as_str(),
            )?
        };
        if config.fleet.conflicts == ConflictPolicy::Serialize {
            view.read_conflicts(&*self.store)?;
        }
        let (claimed, wake) = self.claim(view, events)?;
        let delivering = self.deliver_claimed(claimed, events)?;
        self.totals.passes += 1;
        self.deciding += began.elapsed().saturating_sub(delivering);
        self.counts(events)?;
        self.pack_streams();
        Ok(wake.map(|w| Duration::from_millis(w.saturating_sub(now_ms()).max(1) as u64)))
    }

    fn counts(&mut self, events: &mut dyn FleetEvents) -> Result<()> {
        let fleet = match &self.options.drain {
            Drain::Fleet(name) => Some(name.as_str()),
            Drain::Forever => {
                // Only a status line waits for these: counting every item the store ever had
                // at every pass would cost a worker more than its rounds' own records.
                if self.counted_at.is_some_and(|at| at.elapsed() < COUNT_EVERY) {
                    return Ok(());
                }
                self.counted_at = Some(Instant::now());
                None
            }
        };
        let counts = self.store.queue_counts(fleet)?;
        self.counted = Some(counts.clone());
        let count = |states: &[QueueState]| {
            counts
                .iter()
                .filter(|(state, _)| states.contains(state))
                .map(|(_, n)| *n as usize)
                .sum()
        };
        events.event(FleetEvent::Counts {
            queued: count(&[QueueState::Queued]),
            running: count(&[QueueState::Delivering, QueueState::Delivered]),
            ended: count(&[QueueState::Ended]),
            refused: count(&[QueueState::Refused, QueueState::Stale]),
        });
        Ok(())
    }
}
