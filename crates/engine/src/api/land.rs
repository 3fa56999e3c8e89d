//! The engine's calls for the merge queue (docs/land.md): queue tasks to land and run a lander
//! in the caller's thread, and read the queue.

use crate::api::Engine;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::ops::land::keeper::keep_landing;
use crate::ops::land::{LandOptions, LandReport, LandStatus};
use std::sync::atomic::{AtomicBool, Ordering};

impl Engine {
    /// Queues tasks to land on their bases (`ganger land`), then, with `run`, lands the queue
    /// here until it is empty.
    pub fn land(&self, mut request: LandOptions, notices: &mut dyn Notices) -> Result<LandReport> {
        let commander = request
            .commander
            .take()
            .unwrap_or_else(|| self.commander.clone());
        crate::ops::land::land(self.workspace(), &request, &commander, notices)
    }

    /// Runs `work` (the scheduler of `serve` or a worker) with a lander beside it on a thread
    /// of its own (docs/land.md): it queues the tasks labelled `land=true` whose last round
    /// passed and lands each base no other lander holds, until `work` returns (its batch
    /// under test, if any, finished first).
    pub(crate) fn with_lander<T>(&self, work: impl FnOnce() -> T) -> T {
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| keep_landing(self.workspace(), &self.commander, &stop));
            let done = work();
            stop.store(true, Ordering::Relaxed);
            done
        })
    }

    /// The merge queue, its batches, the flaky checks and what was sent back.
    pub fn land_status(&self) -> Result<LandStatus> {
        crate::ops::land::status(self.workspace())
    }
}
