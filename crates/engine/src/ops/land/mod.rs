//! `ganger land`: a merge queue that never breaks the base. Tasks whose last round passed
//! are queued (`enqueue.rs`); a lander, one per base at a time through a claim in the store
//! (`lander.rs`), takes them in batches: each task merged onto the base's head in memory (a
//! conflict leaves the batch), the rest merged together (`chain.rs`) and tested in a scratch
//! worktree with the repository's checks (`checks.rs`, a failing check run again to tell a
//! flaky one), bisected to the culprits when red (`bisect.rs`, pure), and what passed moved
//! onto the base in one compare-and-swap, recorded in the store before and after so that a
//! lander killed at any moment leaves the base at a batch boundary and nothing lands twice
//! (`moving.rs`). Inside `ganger serve` and a worker a keeper (`keeper.rs`) does the same in
//! the background, and queues the tasks labelled `land=true`. `ganger merge` stays the way to merge one task by hand.

pub(crate) mod batch;
pub(crate) mod bisect;
pub(crate) mod chain;
pub(crate) mod checks;
pub(crate) mod context;
pub(crate) mod enqueue;
pub(crate) mod fix;
pub(crate) mod judge;
pub(crate) mod keeper;
pub(crate) mod landed;
pub(crate) mod lander;
pub(crate) mod moving;
pub(crate) mod orphans;
pub(crate) mod place;
pub(crate) mod report;
pub(crate) mod status;

use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
pub use crate::ops::land::checks::FailedCheck;
pub use crate::ops::land::report::{
    BatchEntry, BatchReport, FixRound, LAND_SCHEMA, LAND_STATUS_SCHEMA, LandOptions, LandReport,
    LandStatus, Probe, QueueEntry, QueuedTask, Returned,
};

/// Queues `options.slugs`, then, with `options.run`, lands the queue in the foreground.
pub(crate) fn land(
    ws: &Workspace,
    options: &LandOptions,
    commander: &str,
    notices: &mut dyn Notices,
) -> Result<LandReport> {
    if options.batch == Some(0) {
        return Err(EngineError::invalid("--batch must be at least 1"));
    }
    if options.slugs.is_empty() && !options.run {
        return Err(EngineError::invalid(
            "ganger land needs tasks to queue, or --run to land the queue",
        )
        .hint("`ganger land status` shows the queue"));
    }
    let queued = if options.slugs.is_empty() {
        Vec::new()
    } else {
        enqueue::enqueue(ws, options, commander, notices)?
    };
    let batches = if options.run {
        lander::run(ws, options.batch, commander, notices)?
    } else {
        Vec::new()
    };
    Ok(LandReport {
        schema: LAND_SCHEMA,
        queued,
        batches,
    })
}

/// The queue and its batches.
pub(crate) fn status(ws: &Workspace) -> Result<LandStatus> {
    status::status(ws)
}
