//! The one reader of every subscription of a commander: a thread of its own (never the
//! blocking pool the calls wait in) looks at the watched resources every
//! [`crate::resources::LOOK_EVERY`], the task table read once for all of them, and publishes
//! each resource's fingerprint; a subscription is a task of its session that waits for a
//! change of its resource's and tells the client. The thread runs while something is
//! watched: a resource whose subscriptions all ended is looked at no more, and with none
//! left the thread ends.

use ganger_engine::Engine;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The reader of one commander's subscriptions.
pub struct Watcher {
    engine: Arc<Engine>,
    watched: Mutex<Watched>,
}

#[derive(Default)]
struct Watched {
    /// Each watched resource's fingerprint, as last read.
    resources: HashMap<String, watch::Sender<Value>>,
    /// Whether the reading thread runs.
    reading: bool,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("commander", &self.engine.commander())
            .finish_non_exhaustive()
    }
}

impl Watcher {
    /// The reader for `engine`'s commander (nothing read until something is watched).
    pub fn new(engine: Arc<Engine>) -> Arc<Watcher> {
        Arc::new(Watcher {
            engine,
            watched: Mutex::default(),
        })
    }

    /// The fingerprint of `uri` from now on; `now` is what it is now, for a resource nobody
    /// watched yet.
    pub fn watch(self: &Arc<Self>, uri: &str, now: Value) -> watch::Receiver<Value> {
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        let receiver = watched
            .resources
            .entry(uri.to_owned())
            .or_insert_with(|| watch::channel(now).0)
            .subscribe();
        if !watched.reading {
            let reader = self.clone();
            watched.reading = std::thread::Builder::new()
                .name("mcp-watch".into())
                .spawn(move || reader.run())
                .is_ok();
        }
        receiver
    }

    /// How many resources are watched.
    pub fn watched(&self) -> usize {
        self.watched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resources
            .len()
    }

    fn run(&self) {
        loop {
            std::thread::sleep(crate::resources::LOOK_EVERY);
            let uris: Vec<String> = {
                let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
                watched
                    .resources
                    .retain(|_, sender| sender.receiver_count() > 0);
                if watched.resources.is_empty() {
                    watched.reading = false;
                    return;
                }
                watched.resources.keys().cloned().collect()
            };
            let prints = crate::resources::fingerprints(&self.engine, &uris);
            let watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
            for (uri, print) in uris.iter().zip(prints) {
                if let Some(sender) = watched.resources.get(uri) {
                    sender.send_if_modified(|last| {
                        let changed = *last != print;
                        if changed {
                            *last = print;
                        }
                        changed
                    });
                }
            }
        }
    }
}
