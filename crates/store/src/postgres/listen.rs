//! One listening connection per process and database, shared by every waiter and follower: a
//! thread LISTENs on [`CLAIM_END`], [`STREAM_APPEND`] and [`QUEUE_CHANGE`] and hands each notification to the
//! waiters that asked for its payload. A scheduler watching many rounds so holds one
//! connection for all of them, not one each. Every wait is also a poll (its caller looks
//! again after at most a second), so a notification lost while the connection is down (it is
//! made again a second later) only delays a waiter, never strands it.

use super::pool::Server;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The channel a released claim is announced on (payload: the claim's name).
pub(crate) const CLAIM_END: &str = "ganger_claim_end";
/// The channel an append to a stream is announced on (payload: `ROUND_ID:KIND`).
pub(crate) const STREAM_APPEND: &str = "ganger_stream";
/// The channel work queued (or put back) is announced on; its payload is its own name.
pub(crate) const QUEUE_CHANGE: &str = "ganger_queue";

/// How long the listening thread waits for a notification before it checks that its pool is
/// still wanted.
const LISTEN_SLICE: Duration = Duration::from_secs(1);
/// How long a new subscription waits for the listening connection to be up (the first one
/// of a process makes it); past this it goes on, and its waits are polls until it is.
const UP_WITHIN: Duration = Duration::from_secs(2);

/// A waiter: the payloads it wants, and how it is woken.
#[derive(Debug)]
struct Waiter {
    wanted: Vec<String>,
    wake: SyncSender<()>,
}

/// The waiters of one pool, and whether its listening connection is up.
#[derive(Debug, Default)]
pub(crate) struct Hub {
    waiters: Mutex<HashMap<u64, Waiter>>,
    next: AtomicU64,
    up: AtomicBool,
}

impl Hub {
    /// A hub whose listening thread connects with `pool` while the pool lives.
    pub(crate) fn start(pool: &Arc<Server>) -> std::io::Result<Arc<Hub>> {
        let hub = Arc::new(Hub::default());
        let weak = Arc::downgrade(pool);
        let listening = Arc::clone(&hub);
        std::thread::Builder::new()
            .name("pg-listen".into())
            .stack_size(super::THREAD_STACK)
            .spawn(move || listen(&weak, &listening))?;
        Ok(hub)
    }

    /// Wakes the waiters that asked for `payload`.
    fn deliver(&self, payload: &str) {
        let waiters = self.waiters.lock().unwrap_or_else(|e| e.into_inner());
        for waiter in waiters.values() {
            if waiter.wanted.iter().any(|w| w == payload) {
                // Full: a wake is pending already, which is all a waiter needs to know.
                let _ = waiter.wake.try_send(());
            }
        }
    }

    /// Asks to be woken by notifications with one of `payloads`. Made before the caller
    /// looks at what it waits for, so that nothing between the look and the wait is missed.
    pub(crate) fn subscribe(self: &Arc<Hub>, payloads: Vec<String>) -> Subscription {
        let (wake, woken) = mpsc::sync_channel(1);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.waiters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                Waiter {
                    wanted: payloads,
                    wake,
                },
            );
        let deadline = Instant::now() + UP_WITHIN;
        while !self.up.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        Subscription {
            hub: Arc::clone(self),
            id,
            woken,
        }
    }
}

/// The listening thread: (re)connects while the pool lives, and delivers what it hears.
fn listen(pool: &Weak<Server>, hub: &Hub) {
    loop {
        let Some(strong) = pool.upgrade() else {
            return;
        };
        let client = strong.connect();
        drop(strong);
        if let Ok(mut client) = client
            && client
                .batch_execute(&format!(
                    "LISTEN {CLAIM_END}; LISTEN {STREAM_APPEND}; LISTEN {QUEUE_CHANGE}"
                ))
                .is_ok()
        {
            hub.up.store(true, Ordering::SeqCst);
            loop {
                if pool.strong_count() == 0 {
                    return;
                }
                let heard = client.notification(LISTEN_SLICE);
                match heard {
                    Ok(Some(note)) => hub.deliver(note.payload()),
                    Ok(None) if client.is_closed() => break,
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
            hub.up.store(false, Ordering::SeqCst);
        }
        // Down: waiters poll meanwhile; try again in a moment.
        std::thread::sleep(LISTEN_SLICE);
    }
}

/// A waiter's interest in some payloads, forgotten when dropped.
#[derive(Debug)]
pub(crate) struct Subscription {
    hub: Arc<Hub>,
    id: u64,
    woken: Receiver<()>,
}

impl Subscription {
    /// Sleeps until a notification this subscription asked for comes (or came since the last
    /// wait), or `limit` has passed. True when one came.
    pub(crate) fn wait(&self, limit: Duration) -> bool {
        self.woken.recv_timeout(limit).is_ok()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub
            .waiters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}
