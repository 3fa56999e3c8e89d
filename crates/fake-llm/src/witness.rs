//! Witnesses for tests of many agents at once, kept by the server rather than by whatever
//! is tested: how many model requests were in flight per model (now and at most), and the
//! task a request belongs to (the `x-ganger-task` header a worker sends). A request may ask
//! to be held for a while with `x-fake-delay-ms`, so that concurrency is visible.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The header naming the task of a request.
pub const TASK_HEADER: &str = "x-ganger-task";
/// The header asking the server to hold the answer for this many milliseconds.
pub const DELAY_HEADER: &str = "x-fake-delay-ms";

/// Model requests of one model in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// Now.
    pub now: usize,
    /// The most at any moment.
    pub max: usize,
    /// In all, answered or not.
    pub total: usize,
}

/// The in-flight counts by model.
#[derive(Debug, Default, Clone)]
pub(crate) struct InFlightCounter {
    counts: Arc<Mutex<BTreeMap<String, InFlight>>>,
}

/// One request in flight; counted out when dropped.
#[derive(Debug)]
pub(crate) struct InFlightGuard {
    counts: Arc<Mutex<BTreeMap<String, InFlight>>>,
    model: String,
}

impl InFlightCounter {
    /// Counts a request of `model` in.
    pub(crate) fn enter(&self, model: &str) -> InFlightGuard {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = counts.entry(model.to_owned()).or_default();
        entry.now += 1;
        entry.total += 1;
        entry.max = entry.max.max(entry.now);
        InFlightGuard {
            counts: Arc::clone(&self.counts),
            model: model.to_owned(),
        }
    }

    /// A copy of the counts.
    pub(crate) fn snapshot(&self) -> BTreeMap<String, InFlight> {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = counts.get_mut(&self.model) {
            entry.now = entry.now.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maximum_is_kept_after_requests_leave() {
        let counter = InFlightCounter::default();
        let a = counter.enter("m");
        let b = counter.enter("m");
        let c = counter.enter("n");
        drop(a);
        let _d = counter.enter("m");
        drop(b);
        drop(c);
        let counts = counter.snapshot();
        assert_eq!(
            counts["m"],
            InFlight {
                now: 1,
                max: 2,
                total: 3
            }
        );
        assert_eq!(
            counts["n"],
            InFlight {
                now: 0,
                max: 1,
                total: 1
            }
        );
    }
}
