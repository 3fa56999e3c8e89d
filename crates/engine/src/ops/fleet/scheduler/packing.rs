//! A scheduler's share of packing finished rounds' streams (PostgreSQL, `compact_streams`):
//! a round's host packs its own at its end, and a scheduler's pass packs what was left, a few
//! rounds at a time: rounds whose host was killed at its end, and those of a store made
//! before streams were packed.

use super::Scheduler;
use std::time::{Duration, Instant};

/// How often a pass looks for streams to pack.
const PACK_EVERY: Duration = Duration::from_secs(5);

/// At most this many rounds are packed in one pass, so that a store with many to pack holds
/// no pass up for long.
const PACK_AT_ONCE: u32 = 32;

impl Scheduler<'_> {
    /// Packs the streams of up to [`PACK_AT_ONCE`] ended rounds, at most every
    /// [`PACK_EVERY`]. A failure waits for the next time: the rows read the same.
    pub(super) fn pack_streams(&mut self) {
        if self.packed_at.is_some_and(|at| at.elapsed() < PACK_EVERY) {
            return;
        }
        self.packed_at = Some(Instant::now());
        let Ok(rounds) = self.store.unpacked_rounds(PACK_AT_ONCE) else {
            return;
        };
        for round in rounds {
            if self.store.compact_streams(round).is_err() {
                return;
            }
        }
    }
}
