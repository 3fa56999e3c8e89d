//! Following a stream until its round ends, for any backend that can read a stream from an
//! offset and say whether a claim lives: read what is there; at its end, wait a moment and
//! read again while the round's claim lives; once the claim is dead, read once more (what was
//! appended before the end) and stop. A backend with notifications overrides
//! [`Backend::follow_stream`](crate::Backend::follow_stream) to wake on appends instead.

use crate::liveness::{ClaimKey, Liveness};
use crate::streams::{RoundStream, Streams};
use std::io::{self, Read};
use std::time::Duration;

/// How long a follow waits before it looks for more.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);

/// A stream followed until its claim ends.
pub(crate) struct Follow<'a, B: ?Sized> {
    backend: &'a B,
    stream: RoundStream,
    claim: ClaimKey,
    offset: u64,
    reader: Option<Box<dyn Read + Send>>,
    /// The claim was seen dead: what is left is read, then the follow ends.
    ended: bool,
}

impl<'a, B: Liveness + Streams + ?Sized> Follow<'a, B> {
    pub(crate) fn new(
        backend: &'a B,
        stream: &RoundStream,
        claim: &ClaimKey,
        offset: u64,
    ) -> Follow<'a, B> {
        Follow {
            backend,
            stream: stream.clone(),
            claim: claim.clone(),
            offset,
            reader: None,
            ended: false,
        }
    }

    fn alive(&self) -> io::Result<bool> {
        self.backend.is_alive(&self.claim).map_err(io::Error::other)
    }
}

impl<B: Liveness + Streams + ?Sized> Read for Follow<'_, B> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let reader = match &mut self.reader {
                Some(reader) => reader,
                None => match self
                    .backend
                    .read_stream(&self.stream, self.offset)
                    .map_err(io::Error::other)?
                {
                    Some(reader) => self.reader.insert(reader),
                    None if self.alive()? => {
                        std::thread::sleep(FOLLOW_EVERY);
                        continue;
                    }
                    None => {
                        return Err(io::Error::new(
                            io::ErrorKind::NotFound,
                            format!(
                                "round {} of {} has no {:?} stream",
                                self.stream.number, self.stream.slug, self.stream.kind
                            ),
                        ));
                    }
                },
            };
            let read = match reader.read(buf) {
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if read > 0 {
                self.offset += read as u64;
                return Ok(read);
            }
            // At the end of what was there: the next look reads from here afresh.
            self.reader = None;
            if self.ended {
                return Ok(0);
            }
            if self.alive()? {
                std::thread::sleep(FOLLOW_EVERY);
            } else {
                self.ended = true;
            }
        }
    }
}
