//! What a race's driver waits on between two looks at its attempts: the end of each round
//! and fix loop it saw working, told by the store (`when_ended`), so that the driver looks
//! again the moment an attempt may have ended rather than after a fixed pause.

use ganger_store::{Backend, ClaimKey};
use std::collections::HashSet;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

/// The longest a driver waits without being told anything: it looks again then all the
/// same, for what no claim's end tells (a round recorded after the look).
const LOOK_AT_LEAST_EVERY: Duration = Duration::from_secs(1);
/// How often it looks when the store could not watch a claim it was asked to.
const LOOK_UNWATCHED: Duration = Duration::from_millis(200);

/// The claims a driver waits on, and the channel their ends are told on.
pub(super) struct Wake {
    tx: Sender<()>,
    rx: Receiver<()>,
    watched: HashSet<ClaimKey>,
    unwatched: bool,
}

impl Wake {
    pub(super) fn new() -> Wake {
        let (tx, rx) = channel();
        Wake {
            tx,
            rx,
            watched: HashSet::new(),
            unwatched: false,
        }
    }

    /// Has the store tell when `claim` ends (at once if it has); once per claim.
    pub(super) fn watch(&mut self, store: &dyn Backend, claim: &ClaimKey) {
        if !self.watched.insert(claim.clone()) {
            return;
        }
        let tx = self.tx.clone();
        let told = store.when_ended(
            claim,
            Box::new(move || {
                let _ = tx.send(());
            }),
        );
        if told.is_err() {
            // Not watched: the driver looks often instead.
            self.unwatched = true;
        }
    }

    /// Waits until a watched claim ends (or the longest wait passes), then takes every end
    /// told meanwhile: one look sees them all.
    pub(super) fn wait(&self) {
        let limit = if self.unwatched {
            LOOK_UNWATCHED
        } else {
            LOOK_AT_LEAST_EVERY
        };
        let _ = self.rx.recv_timeout(limit);
        while self.rx.try_recv().is_ok() {}
    }
}
