//! The engine's calls for the merge queue (docs/land.md): queue tasks to land and run a lander
//! in the caller's thread, and read the queue.

use crate::api::Engine;
use crate::base::error::Result;
use crate::base::notice::Notice;
use crate::base::notice::Notices;
use crate::ops::fleet::{FleetEvent, FleetEvents};
use crate::ops::land::keeper::keep_landing;
use crate::ops::land::{LandOptions, LandReport, LandStatus};
use std::sync::Mutex;
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
    /// under test, if any, finished first). The lander's steps reach `events` too, as
    /// [`FleetEvent::Land`], between the scheduler's own.
    pub(crate) fn with_lander<T>(
        &self,
        events: &mut (dyn FleetEvents + Send),
        work: impl FnOnce(&mut dyn FleetEvents) -> T,
    ) -> T {
        let stop = AtomicBool::new(false);
        let shared = Mutex::new(events);
        let tell = |event: FleetEvent| {
            // A front end that panicked while it printed has said all it will.
            if let Ok(mut events) = shared.lock() {
                events.event(event);
            }
        };
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut steps = |notice: Notice| {
                    if let Notice::Land { base, message } = notice {
                        tell(FleetEvent::Land { base, message });
                    }
                };
                keep_landing(self.workspace(), &self.commander, &stop, &mut steps)
            });
            let done = work(&mut |event| tell(event));
            stop.store(true, Ordering::Relaxed);
            done
        })
    }

    /// The merge queue, its batches, the flaky checks and what was sent back.
    pub fn land_status(&self) -> Result<LandStatus> {
        crate::ops::land::status(self.workspace())
    }
}
