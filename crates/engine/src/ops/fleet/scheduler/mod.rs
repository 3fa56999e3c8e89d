//! The scheduler: one loop that owns what the user sees, fed by messages over one channel
//! (nextest's dispatcher shape): a thread per running round blocks on the round's host lock
//! and says when it ends; between messages the loop wakes every `poll` to read the queue.
//! Each pass settles dead rounds, reviews the rounds it started that have ended (a rate
//! limit pauses the model and requeues the task), counts the running rounds from the store
//! (the truth, so a restarted scheduler decides the same), and delivers the queued items
//! whose dependencies are done, whose model is not paused and that fit the limits.
//!
//! The loop keeps no state the store does not have: killed at any moment, a new scheduler
//! finds claimed items (`delivering`) and works out from the rounds whether their round was
//! recorded, so every round asked for runs once.

mod execute;
mod recovery;
mod review;

use super::deliver::{Delivery, deliver, failed_delivery};
use super::events::{FleetEvent, FleetEvents};
use super::lanes::Lanes;
use super::limits::{Limits, Running};
use super::offer::Offer;
use super::spec::StartSpec;
use crate::base::error::Result;
use crate::base::notice::Notice;
use crate::env::workspace::Workspace;
use crate::round::reaper::settle_running;
use ganger_events::RoundStatus;
use ganger_store::{Claim, ClaimKey, QueueItem, QueueKind, QueueState, Task, now_ms};
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

/// How many queued items a pass reads at a time.
const QUEUED_PAGE: u32 = 64;

/// How many deliveries run at once (each is mostly a `git worktree add` and a process start).
const PARALLEL_DELIVERIES: usize = 8;

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
    /// Items whose delivery met a failure of the environment, since when (in a row).
    unavailable: HashMap<i64, Instant>,
    /// The lanes of the fleets' remotes this scheduler delivers from (their clones, fetches,
    /// pushes), off this loop.
    lanes: Lanes,
    /// This scheduler's items a lane is delivering.
    in_lanes: HashSet<i64>,
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
        unavailable: HashMap::new(),
        lanes: Lanes::new(ws, wake),
        in_lanes: HashSet::new(),
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
        let mut delivering = Duration::ZERO;
        self.counted = None;
        self.lanes_finished(events)?;
        settle_running(self.ws, &mut *self.store, &mut |_: Notice| {})?;
        let running_rounds = self.store.running_rounds()?;
        let mut running = Running::default();
        let mut busy: BTreeSet<String> = BTreeSet::new();
        for (task, round) in &running_rounds {
            running.add(&task.agent, round.model.as_deref());
            busy.insert(task.slug.clone());
        }
        self.watched
            .retain(|claim| running_rounds.iter().any(|(_, r)| &r.claim == claim));
        for (_, round) in &running_rounds {
            self.watch(round.claim.clone());
        }
        // The items in flight (being delivered, delivered) are all read: a few per slot of
        // every scheduler. The queued ones are read a page at a time, only as far as this
        // pass can start rounds: with a thousand queued, a pass reads a page, not a thousand.
        let fleets = self.store.fleets()?;
        self.remotes = fleets
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.remote.clone()?)))
            .collect();
        let in_flight = self.in_flight(events)?;
        let in_flight = self.review_ended(in_flight, &busy, events)?;
        let me = self.me.key().as_str().to_owned();
        let mine = |item: &QueueItem| item.claimed_by.as_deref() == Some(me.as_str());
        // What this scheduler runs now: what it is delivering, and its rounds still running.
        let mut load = in_flight
            .iter()
            .filter(|i| {
                mine(i)
                    && (i.state == QueueState::Delivering
                        || (i.state == QueueState::Delivered && busy.contains(&i.slug)))
            })
            .count();
        let fleet_limits: BTreeMap<String, Limits> = fleets
            .into_iter()
            .filter_map(|f| Some((f.name, serde_json::from_value(f.limits).ok()?)))
            .collect();
        let now = now_ms();
        let pauses: BTreeMap<String, i64> = self
            .store
            .model_pauses()?
            .into_iter()
            .filter(|p| p.until > now)
            .map(|p| (p.model, p.until))
            .collect();
        let mut wake: Option<i64> = pauses.values().min().copied();
        // One round per task at a time, in queue order per task.
        let mut blocked: BTreeSet<String> = busy.clone();
        for item in &in_flight {
            blocked.insert(item.slug.clone());
        }
        // Whether a slug a queued item comes after is still open, asked once per pass.
        let mut open_slugs: BTreeMap<String, bool> = BTreeMap::new();
        let mut batch: Vec<QueueItem> = Vec::new();
        let mut after_id = 0;
        'pages: loop {
            let page = self
                .store
                .items_in(&[QueueState::Queued], after_id, QUEUED_PAGE)?;
            let last_page = page.len() < QUEUED_PAGE as usize;
            for item in page {
                after_id = item.id;
                if blocked.contains(&item.slug) {
                    continue;
                }
                blocked.insert(item.slug.clone());
                if item.not_before > now {
                    wake = Some(wake.map_or(item.not_before, |w| w.min(item.not_before)));
                    continue;
                }
                // The checks that need no database first: with hundreds queued, most wait on
                // a limit, and a pass should cost little for them.
                if self
                    .options
                    .limits
                    .global
                    .is_some_and(|g| running.total >= g)
                {
                    break 'pages;
                }
                let task = match item.kind {
                    QueueKind::Start => None,
                    QueueKind::Fix | QueueKind::Broadcast => self.store.task(&item.slug)?,
                };
                let (agent, model) = self.agent_and_model(&item, task.as_ref());
                if model.as_ref().is_some_and(|m| pauses.contains_key(m)) {
                    continue;
                }
                if let Some(offer) = &self.options.offer {
                    if load >= offer.capacity {
                        break 'pages;
                    }
                    // An agent or a sandbox this worker lacks: left for another worker.
                    let sandbox = self.sandbox_of(&item, task.as_ref());
                    if !offer.runs(&agent, &sandbox) {
                        continue;
                    }
                }
                let fleet = item.fleet.as_ref().and_then(|f| fleet_limits.get(f));
                if !self
                    .options
                    .limits
                    .allow(&running, &agent, model.as_deref())
                    || fleet.is_some_and(|l| !l.allow(&running, &agent, model.as_deref()))
                {
                    continue;
                }
                if task.as_ref().is_some_and(|t| {
                    crate::task::rules::Inbound::of(t) == crate::task::rules::Inbound::Hold
                }) {
                    continue;
                }
                match self.dependencies(&item, &mut open_slugs)? {
                    Deps::Wait => continue,
                    Deps::Failed(reason) => {
                        self.refuse(&item, QueueState::Refused, reason, events)?;
                        continue;
                    }
                    Deps::Done => {}
                }
                if !self.store.claim_item(item.id, self.me.key())? {
                    continue;
                }
                // Counted now, so the limits hold for the rest of the pass.
                running.add(&agent, model.as_deref());
                load += 1;
                batch.push(item);
            }
            if last_page {
                break;
            }
        }
        self.load = load;
        // The executor side: the claimed items are delivered a few at a time on threads
        // (each a `start` or `fix` that makes a worktree, records the round and spawns its
        // host), then the loop records how each went.
        let started = Instant::now();
        let mut results: Vec<(&QueueItem, Delivery)> = Vec::with_capacity(batch.len());
        // An item of a fleet with a remote runs in this host's clone of it, made ready and
        // delivered by the remote's lane, off this loop (a silent remote holds its lane only).
        let mut local: Vec<&QueueItem> = Vec::with_capacity(batch.len());
        for item in &batch {
            match self.remote_of(item, None) {
                Ok(None) => local.push(item),
                Ok(Some(remote)) => {
                    self.in_lanes.insert(item.id);
                    self.lanes.deliver(&remote, item.clone());
                }
                Err(e) => results.push((item, failed_delivery(e))),
            }
        }
        for chunk in local.chunks(PARALLEL_DELIVERIES) {
            let ws = self.ws;
            let delivered: Vec<Delivery> = std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|item| {
                        scope.spawn(move || match ws.open_store() {
                            Ok(store) => deliver(ws, &*store, item, &mut |_: Notice| {}),
                            Err(e) => Delivery::Unavailable(e.message),
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Delivery::Refused("the delivery panicked".to_owned())
                        })
                    })
                    .collect()
            });
            results.extend(chunk.iter().copied().zip(delivered));
        }
        delivering += started.elapsed();
        for (item, delivery) in results {
            self.record_delivery(item, delivery, events)?;
        }
        self.totals.passes += 1;
        self.deciding += began.elapsed().saturating_sub(delivering);
        self.counts(events)?;
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

    /// The agent and model a queued item's round would use.
    fn agent_and_model(&self, item: &QueueItem, task: Option<&Task>) -> (String, Option<String>) {
        if let Some(task) = task {
            return (task.agent.clone(), task.model.clone());
        }
        let spec = StartSpec::from_json(&item.options).unwrap_or_default();
        let defaults = &self.ws.config.defaults;
        (
            spec.agent.unwrap_or_else(|| defaults.agent.clone()),
            spec.model.or_else(|| defaults.model.clone()),
        )
    }

    /// The sandbox a queued item's round would run in.
    fn sandbox_of(&self, item: &QueueItem, task: Option<&Task>) -> String {
        if let Some(task) = task {
            return task.sandbox.clone();
        }
        StartSpec::from_json(&item.options)
            .ok()
            .and_then(|spec| spec.sandbox)
            .unwrap_or_else(|| self.ws.config.sandbox.default.clone())
    }

    /// Whether the tasks `item` comes after have ended `done`.
    fn dependencies(&self, item: &QueueItem, open: &mut BTreeMap<String, bool>) -> Result<Deps> {
        for after in &item.after {
            let is_open = match open.get(after) {
                Some(is_open) => *is_open,
                None => {
                    let is_open = self.store.slug_is_open(after)?;
                    open.insert(after.clone(), is_open);
                    is_open
                }
            };
            if is_open {
                return Ok(Deps::Wait);
            }
            let Some(task) = self.store.task(after)? else {
                return Ok(Deps::Wait);
            };
            match task.last_status {
                Some(RoundStatus::Done) => {}
                Some(RoundStatus::Running) | None => return Ok(Deps::Wait),
                Some(other) => {
                    return Ok(Deps::Failed(format!(
                        "it comes after {after}, which ended {}",
                        other.as_str()
                    )));
                }
            }
        }
        Ok(Deps::Done)
    }
}

enum Deps {
    Done,
    Wait,
    Failed(String),
}
