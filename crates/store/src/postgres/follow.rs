//! Following a stream on PostgreSQL: one connection LISTENs for appends to the stream and for
//! the end of its round's claim, so a follower wakes the moment either comes instead of
//! polling every 50 ms; it still looks again every [`POLL_EVERY`] (a lease that ran out is
//! announced by nobody). What it reads and when it stops are as the generic follow's: at the
//! end of what is there, wait while the claim lives; once it is dead, read once more and stop.

use super::listen::{CLAIM_END, Listener, STREAM_APPEND};
use super::liveness::{POLL_EVERY, time_left};
use super::streams::{payload, read_from};
use crate::streams::RoundStream;
use std::io::{self, Read};

/// A stream followed until its claim ends.
pub(crate) struct PgFollow {
    listener: Listener,
    stream: RoundStream,
    /// The payloads that wake this follow: an append to the stream, the claim's end.
    wake_on: [String; 2],
    offset: u64,
    /// Read but not yet returned.
    pending: Vec<u8>,
    taken: usize,
    /// The claim was seen dead: what is left is read, then the follow ends.
    ended: bool,
}

impl PgFollow {
    pub(crate) fn new(
        listener: Listener,
        stream: &RoundStream,
        claim: &str,
        offset: u64,
    ) -> PgFollow {
        PgFollow {
            listener,
            stream: stream.clone(),
            wake_on: [payload(stream), claim.to_owned()],
            offset,
            pending: Vec::new(),
            taken: 0,
            ended: false,
        }
    }

    /// The channels a follow listens on.
    pub(crate) const CHANNELS: [&'static str; 2] = [STREAM_APPEND, CLAIM_END];

    fn alive(&mut self) -> io::Result<bool> {
        let claim = self.wake_on[1].clone();
        let conn = self.listener.conn().map_err(io::Error::other)?;
        Ok(time_left(&mut **conn, &claim)
            .map_err(io::Error::other)?
            .is_some())
    }

    fn nap(&mut self) -> io::Result<()> {
        let wanted = [self.wake_on[0].as_str(), self.wake_on[1].as_str()];
        self.listener
            .wait(&wanted, POLL_EVERY)
            .map(drop)
            .map_err(io::Error::other)
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
            let conn = self.listener.conn().map_err(io::Error::other)?;
            let found =
                read_from(&mut **conn, &self.stream, self.offset).map_err(io::Error::other)?;
            match found {
                Some(bytes) if !bytes.is_empty() => {
                    self.pending = bytes;
                    self.taken = 0;
                }
                Some(_) if self.ended => return Ok(0),
                Some(_) => {
                    if self.alive()? {
                        self.nap()?;
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
                None if self.alive()? => self.nap()?,
                // Once more: a stream made just before the end.
                None => self.ended = true,
            }
        }
    }
}
