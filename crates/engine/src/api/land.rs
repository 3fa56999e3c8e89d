//! The engine's calls for the merge queue (docs/land.md): queue tasks to land and run a lander
//! in the caller's thread, and read the queue.

use crate::api::Engine;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::ops::land::{LandOptions, LandReport, LandStatus};

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

    /// The merge queue, its batches, the flaky checks and what was sent back.
    pub fn land_status(&self) -> Result<LandStatus> {
        crate::ops::land::status(self.workspace())
    }
}
