//! The backend: everything more than one process must agree on, behind one trait that the
//! engine holds as a trait object. Records (tasks, rounds, the journal), the queue, ownership,
//! pipelines, evidence, starts and cleans under way ([`Store`] and its companions), round
//! liveness ([`Liveness`]) and rounds' streams ([`Streams`]). SQLite is the backend for one
//! machine; a networked one (PostgreSQL) implements the same traits, and the conformance
//! suite (`tests/conformance/`) holds every backend to the same promises.
//!
//! The provided methods combine the parts; a backend that can do better (one query for the
//! dead rounds, a notification instead of a poll for a follow) overrides them.

use crate::conflicts::ConflictStore;
use crate::error::StoreError;
use crate::follow::Follow;
use crate::land::LandStore;
use crate::liveness::{ClaimKey, Liveness};
use crate::ownership::OwnershipStore;
use crate::pipeline::PipelineStore;
use crate::queue::QueueStore;
use crate::race::RaceStore;
use crate::records::{Round, Task};
use crate::store::Store;
use crate::streams::{RoundStream, Streams};
use crate::tallies::TallyStore;
use crate::workers::WorkerStore;
use std::io::Read;

/// A backend for all of ganger's shared state.
pub trait Backend:
    Store
    + QueueStore
    + OwnershipStore
    + PipelineStore
    + RaceStore
    + LandStore
    + ConflictStore
    + Liveness
    + Streams
    + WorkerStore
    + TallyStore
{
    /// Every running round whose host is gone (its claim is dead), with its task: the rounds
    /// the reaper settles.
    fn dead_rounds(&self) -> Result<Vec<(Task, Round)>, StoreError> {
        let mut dead = Vec::new();
        for (task, round) in self.running_rounds()? {
            if !self.is_alive(&round.claim)? {
                dead.push((task, round));
            }
        }
        Ok(dead)
    }

    /// Has `then` called whenever work is queued or put back in the queue (by any process),
    /// until it returns false; false when this backend cannot tell (its schedulers poll).
    fn when_queue_changes(&self, then: Box<dyn Fn() -> bool + Send>) -> Result<bool, StoreError> {
        drop(then);
        Ok(false)
    }

    /// Follows a stream from byte `offset` while `claim` (its round's) lives: a read waits
    /// for more, and returns 0 only once the claim has ended and everything appended before
    /// its end was read. A stream not made yet is waited for while the claim lives; one never
    /// made by a claim that ended is an error of kind `NotFound`.
    fn follow_stream<'a>(
        &'a self,
        stream: &RoundStream,
        claim: &ClaimKey,
        offset: u64,
    ) -> Result<Box<dyn Read + 'a>, StoreError> {
        Ok(Box::new(Follow::new(self, stream, claim, offset)))
    }
}
