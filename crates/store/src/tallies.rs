//! Tallies of the rounds for an operator's metrics (`ganger serve --metrics`): how many rounds
//! the store holds by their task's agent and their status, with how long the ended ones took,
//! counted in the buckets a histogram needs, in one grouped query rather than a read of every
//! round.

use crate::error::StoreError;
use ganger_events::RoundStatus;

/// The rounds of one agent in one status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundTally {
    /// The agent of the rounds' task.
    pub agent: String,
    pub status: RoundStatus,
    /// How many rounds.
    pub rounds: u64,
    /// How many of them have ended (a running round has not).
    pub ended: u64,
    /// The ended rounds' time from start to end, summed (ms).
    pub duration_ms: u64,
    /// For each bound asked for, how many ended rounds took at most that long (cumulative,
    /// as a histogram's buckets are).
    pub within: Vec<u64>,
}

/// What a backend tallies of its rounds.
pub trait TallyStore {
    /// The rounds by agent and status, ordered by both, with the ended ones' durations
    /// counted against `bounds_ms` (ascending, each at least 0).
    fn round_tallies(&self, bounds_ms: &[u64]) -> Result<Vec<RoundTally>, StoreError>;
}
