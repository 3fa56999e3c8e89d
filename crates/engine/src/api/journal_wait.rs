//! A blocking watch of a commander's journal, for front ends whose commander waits on one
//! call instead of polling (the MCP server's `watch` tool): it returns as soon as the journal
//! has an entry after the cursor, or when the time limit passes with nothing new.
//!
//! The journal is a table in the store that the round hosts write when a round ends; a cheap
//! read of it every [`LOOK_EVERY`] bounds the delay from a round's end to the answer, with no
//! process of ganger's between them. Rounds whose host died are settled every
//! [`SETTLE_EVERY`] looks (a lock probe per running round), so that their ends reach the
//! journal too.

use crate::api::Engine;
use crate::base::error::Result;
use crate::ops::journal::JournalPage;
use std::time::{Duration, Instant};

/// How often the journal is read while nothing is new.
const LOOK_EVERY: Duration = Duration::from_millis(25);
/// Every how many looks rounds whose host died are settled.
const SETTLE_EVERY: u32 = 40;

impl Engine {
    /// The commander's journal after `after` (default: its cursor), waiting up to `timeout`
    /// for an entry to arrive; an empty page when none did.
    pub fn wait_journal(&self, after: Option<i64>, timeout: Duration) -> Result<JournalPage> {
        let deadline = Instant::now() + timeout;
        let mut page = self.watch(None, after, true)?;
        let mut looks: u32 = 0;
        while page.entries.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(LOOK_EVERY.min(left));
            looks = looks.wrapping_add(1);
            page = self.watch(None, after, looks.is_multiple_of(SETTLE_EVERY))?;
        }
        Ok(page)
    }
}
