//! A connection that LISTENs: what waiters and followers sleep on. It wakes on a notification
//! whose payload it wants, or when its wait runs out (the poll behind every wait, for a lease
//! that ran out without anyone saying so, or a notification lost with a connection). Given
//! back to the pool only after `UNLISTEN *` and with nothing left unread, so that no pooled
//! connection holds a subscription.

use super::pool::Pooled;
use crate::error::StoreError;
use postgres::fallible_iterator::FallibleIterator;
use std::time::{Duration, Instant};

/// The channel a released claim is announced on (payload: the claim's name).
pub(crate) const CLAIM_END: &str = "ganger_claim_end";
/// The channel an append to a stream is announced on (payload: `ROUND_ID:KIND`).
pub(crate) const STREAM_APPEND: &str = "ganger_stream";

/// A connection listening on some channels.
pub(crate) struct Listener {
    conn: Option<Pooled>,
}

impl Listener {
    /// Listens on `channels` with `conn`.
    pub(crate) fn new(mut conn: Pooled, channels: &[&str]) -> Result<Listener, StoreError> {
        let sql: String = channels
            .iter()
            .map(|channel| format!("LISTEN {channel};"))
            .collect();
        conn.batch_execute(&sql)?;
        Ok(Listener { conn: Some(conn) })
    }

    /// The connection, for queries between waits.
    pub(crate) fn conn(&mut self) -> Result<&mut Pooled, StoreError> {
        self.conn
            .as_mut()
            .ok_or_else(|| StoreError::Corrupt("a listener used after it was closed".into()))
    }

    /// Sleeps until a notification whose payload is one of `wanted` comes, or `limit` has
    /// passed. True when one came.
    pub(crate) fn wait(&mut self, wanted: &[&str], limit: Duration) -> Result<bool, StoreError> {
        let deadline = Instant::now() + limit;
        let conn = self.conn()?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let mut notifications = conn.notifications();
            match notifications.timeout_iter(left).next()? {
                Some(note) if wanted.contains(&note.payload()) => return Ok(true),
                Some(_) => {}
                // The wait ran out (or the server went away: the next query says so).
                None => return Ok(false),
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        if conn.batch_execute("UNLISTEN *").is_err() {
            conn.discard();
            return;
        }
        // Notifications that came before the UNLISTEN are read and dropped.
        let mut notifications = conn.notifications();
        let mut pending = notifications.iter();
        while let Ok(Some(_)) = pending.next() {}
    }
}
