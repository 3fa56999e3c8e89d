//! Following a stream on PostgreSQL: the follow subscribes to appends to its stream and to
//! the end of its round's claim on the pool's listening connection (`listen.rs`), so it wakes
//! the moment either comes instead of polling every 50 ms; it still looks again every
//! [`POLL_EVERY`] (a lease that ran out is announced by nobody). What it reads and when it
//! stops are as the generic follow's: at the end of what is there, wait while the claim lives;
//! once it is dead, read once more and stop.

use super::listen::Subscription;
use super::liveness::{POLL_EVERY, time_left};
use super::pool::Pool;
use super::streams::{payload, read_from};
use crate::error::StoreError;
use crate::streams::RoundStream;
use std::io::{self, Read};
use std::sync::Arc;

/// A stream followed until its claim ends.
pub(crate) struct PgFollow {
    pool: Arc<Pool>,
    subscription: Subscription,
    stream: RoundStream,
    claim: String,
    offset: u64,
    /// Read but not yet returned.
    pending: Vec<u8>,
    taken: usize,
    /// The claim was seen dead: what is left is read, then the follow ends.
    ended: bool,
}

impl PgFollow {
    /// Subscribes (before anything is read, so nothing appended after is missed).
    pub(crate) fn new(
        pool: &Arc<Pool>,
        stream: &RoundStream,
        claim: &str,
        offset: u64,
    ) -> Result<PgFollow, StoreError> {
        let subscription = pool
            .hub()?
            .subscribe(vec![payload(stream), claim.to_owned()]);
        Ok(PgFollow {
            pool: Arc::clone(pool),
            subscription,
            stream: stream.clone(),
            claim: claim.to_owned(),
            offset,
            pending: Vec::new(),
            taken: 0,
            ended: false,
        })
    }

    fn alive(&self) -> io::Result<bool> {
        let mut conn = self.pool.get().map_err(io::Error::other)?;
        Ok(time_left(&mut *conn, &self.claim)
            .map_err(io::Error::other)?
            .is_some())
    }

    fn look(&self) -> io::Result<Option<Vec<u8>>> {
        let mut conn = self.pool.get().map_err(io::Error::other)?;
        read_from(&mut *conn, &self.stream, self.offset).map_err(io::Error::other)
    }
}

impl Read for PgFollow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.taken < self.pending.len() {
                let n = buf.len().min(self.pending.len() - self.taken);
                buf[..n].copy_from_slice(&self.pending[self.taken..self.taken + n]);
                self.taken += n;
                self.offset += n as u64;
                return Ok(n);
            }
            match self.look()? {
                Some(bytes) if !bytes.is_empty() => {
                    self.pending = bytes;
                    self.taken = 0;
                }
                Some(_) if self.ended => return Ok(0),
                Some(_) => {
                    if self.alive()? {
                        self.subscription.wait(POLL_EVERY);
                    } else {
                        // Once more: what was appended before the end.
                        self.ended = true;
                    }
                }
                None if self.ended => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!(
                            "round {} of {} has no {:?} stream",
                            self.stream.number, self.stream.slug, self.stream.kind
                        ),
                    ));
                }
                None if self.alive()? => {
                    self.subscription.wait(POLL_EVERY);
                }
                // Once more: a stream made just before the end.
                None => self.ended = true,
            }
        }
    }
}
