//! What the scheduler reports as it works, for a front end to show (a live display on a
//! terminal, plain lines otherwise); the engine prints nothing.

use serde::Serialize;

/// One thing the scheduler did or saw.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum FleetEvent {
    /// A worker reached the store and registered: from now on it takes queued rounds, at
    /// most `capacity` at once. Nothing is said before (a store that does not answer is an
    /// error, not a worker that seems to run).
    Ready { capacity: usize, pid: u32 },
    /// A queued round was started in a detached host.
    Started {
        slug: String,
        round: u32,
        agent: String,
        model: Option<String>,
    },
    /// A round the scheduler started has ended.
    Ended {
        slug: String,
        round: u32,
        status: String,
        reason: Option<String>,
    },
    /// A queued item was refused (or found stale) and will not run.
    Refused { slug: String, reason: String },
    /// A model hit a rate limit: no new round on it before `until` (Unix ms).
    Paused {
        model: String,
        until: i64,
        strikes: u32,
        reason: String,
    },
    /// A task went back to the queue (to continue after a rate limit or an interruption).
    Requeued { slug: String, reason: String },
    /// A queued round waits for tasks its task's work is predicted to conflict with
    /// (`[fleet] conflicts = "serialize"`); said when it starts waiting (or why changes).
    Held { slug: String, reason: String },
    /// A step of the lander that runs beside the scheduler (`serve`, a worker).
    Land { base: String, message: String },
    /// A pass failed (the store was busy beyond its timeout, a file could not be written);
    /// the scheduler carries on at the next one.
    Trouble { message: String },
    /// The counts after a pass.
    Counts {
        queued: usize,
        running: usize,
        ended: usize,
        refused: usize,
    },
}

/// Where fleet events go.
pub trait FleetEvents {
    fn event(&mut self, event: FleetEvent);
}

impl<F: FnMut(FleetEvent)> FleetEvents for F {
    fn event(&mut self, event: FleetEvent) {
        self(event);
    }
}
