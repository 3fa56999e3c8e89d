//! Tasks' rounds as they stream, read once for every client: one thread reads, every
//! [`POLL`] while a round runs (every [`IDLE_POLL`] otherwise), the rounds of the tasks that
//! have clients, through one store connection it keeps open, and broadcasts what it read: a
//! round's report when the feed reaches a round and when it ends, and each line of its stream
//! as the agent's adapter reads it (each event's JSON written once). A client catches up from
//! the store on its own (`events_task.rs`) and then takes the broadcast; the cost of a look at
//! the store does not grow with the number of clients.

use ganger_engine::{Engine, EngineError, RoundFeed};
use ganger_store::Backend;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::broadcast;

/// How often the stream of a running round is read.
pub const POLL: Duration = Duration::from_millis(50);

/// How often tasks with no round running are looked at (for their next round).
pub const IDLE_POLL: Duration = Duration::from_millis(200);

/// How many events wait for the slowest client; one further behind catches up from the store.
const BACKLOG: usize = 1024;

/// The most of a stream one look reads (the rest at the next).
pub const READ_AT_MOST: usize = 4 * 1024 * 1024;

/// What the feed read, its JSON written once for every client.
#[derive(Debug)]
pub enum FeedEvent {
    /// The feed reached round `round`: its report (`None` when it could not be read).
    Reached { round: u32, report: Option<String> },
    /// A line of round `round`'s stream, ending at byte `offset`.
    Line {
        round: u32,
        offset: u64,
        data: String,
    },
    /// Round `round` ended, its stream read to `offset`: its final report.
    Ended {
        round: u32,
        offset: u64,
        report: Option<String>,
    },
    /// The task is gone.
    Gone,
}

/// The feeds of every task that has clients.
#[derive(Debug)]
pub struct TaskFeeds {
    feeds: Mutex<HashMap<String, broadcast::Sender<Arc<FeedEvent>>>>,
    stop: AtomicBool,
}

impl TaskFeeds {
    /// Starts the reader thread for `engine`'s repository.
    pub fn start(engine: Arc<Engine>) -> Arc<TaskFeeds> {
        let feeds = Arc::new(TaskFeeds {
            feeds: Mutex::default(),
            stop: AtomicBool::new(false),
        });
        let reader = feeds.clone();
        std::thread::Builder::new()
            .name("task-feeds".into())
            .spawn(move || reader.run(&engine))
            .ok();
        feeds
    }

    /// What the feed of task `slug` reads from now on.
    pub fn subscribe(&self, slug: &str) -> broadcast::Receiver<Arc<FeedEvent>> {
        let mut feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
        feeds
            .entry(slug.to_owned())
            .or_insert_with(|| broadcast::channel(BACKLOG).0)
            .subscribe()
    }

    /// Stops the reader thread (at its next look).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    fn run(&self, engine: &Engine) {
        let mut store: Option<Box<dyn Backend>> = None;
        let mut followed: HashMap<String, Follow> = HashMap::new();
        while !self.stop.load(Ordering::Relaxed) {
            let watched: Vec<(String, broadcast::Sender<Arc<FeedEvent>>)> = {
                let mut feeds = self.feeds.lock().unwrap_or_else(|e| e.into_inner());
                feeds.retain(|_, sender| sender.receiver_count() > 0);
                feeds.iter().map(|(s, f)| (s.clone(), f.clone())).collect()
            };
            followed.retain(|slug, _| watched.iter().any(|(s, _)| s == slug));
            if watched.is_empty() {
                // Nobody watches: the store is let go until somebody does.
                store = None;
            } else if store.is_none() {
                store = engine.workspace().existing_store().ok().flatten();
            }
            let mut running = false;
            if let Some(open) = store.as_deref() {
                for (slug, sender) in &watched {
                    let follow = followed.entry(slug.clone()).or_default();
                    match follow.look(engine, open, slug, sender) {
                        Ok(runs) => running |= runs,
                        Err(_) => {
                            // Opened again at the next look (a store that went away, a
                            // connection that broke); the round is read again from its start.
                            *follow = Follow::default();
                            store = None;
                            break;
                        }
                    }
                }
            }
            std::thread::sleep(if running { POLL } else { IDLE_POLL });
        }
    }
}

/// Where the feed of one task is.
#[derive(Default)]
struct Follow {
    /// The round followed (0 before the first look).
    round: u32,
    /// Its stream's reader, while it is read.
    feed: Option<RoundFeed>,
    gone: bool,
}

impl Follow {
    /// One look at the task: what is new goes to `sender`. True while a round runs.
    fn look(
        &mut self,
        engine: &Engine,
        store: &dyn Backend,
        slug: &str,
        sender: &broadcast::Sender<Arc<FeedEvent>>,
    ) -> Result<bool, EngineError> {
        let send = |event: FeedEvent| {
            let _ = sender.send(Arc::new(event));
        };
        if self.feed.is_none() {
            let Some(task) = store.task(slug)? else {
                if !self.gone {
                    self.gone = true;
                    send(FeedEvent::Gone);
                }
                return Ok(false);
            };
            // The first look follows the last round; later ones the next.
            let next = if self.round == 0 {
                task.rounds
            } else {
                self.round + 1
            };
            if next == 0 || next > task.rounds {
                return Ok(false);
            }
            let feed = match engine.round_feed(slug, next, 0) {
                Ok(feed) => feed,
                // Recorded but not readable yet: the next look.
                Err(e) if e.kind.is_refusal() => return Ok(false),
                Err(e) => return Err(e),
            };
            self.round = next;
            self.feed = Some(feed);
            send(FeedEvent::Reached {
                round: next,
                report: report_json(engine, slug, next),
            });
        }
        let round = self.round;
        let Some(feed) = self.feed.as_mut() else {
            return Ok(false);
        };
        let read = feed.poll_in(store, READ_AT_MOST, &mut |line| {
            let offset = line.offset;
            let data = serde_json::json!({ "round": round, "line": line }).to_string();
            send(FeedEvent::Line {
                round,
                offset,
                data,
            });
        })?;
        if read.running {
            return Ok(true);
        }
        self.feed = None;
        send(FeedEvent::Ended {
            round,
            offset: read.offset,
            report: report_json(engine, slug, round),
        });
        Ok(false)
    }
}

/// Round `round`'s report as JSON, when it can be read.
pub fn report_json(engine: &Engine, slug: &str, round: u32) -> Option<String> {
    engine
        .report_of(slug, Some(round))
        .ok()
        .and_then(|report| serde_json::to_string(&report).ok())
}
