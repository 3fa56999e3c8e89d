//! A round's streams: what its agent printed on stdout (the raw event stream, the round's
//! record of events) and on stderr, byte for byte (known keys redacted by the host before they
//! get here). The host appends while the round runs; anyone reads from an offset, or follows
//! a stream until its round ends ([`Backend::follow_stream`](crate::Backend::follow_stream)).
//! SQLite keeps them as files beside the database (`tasks/SLUG/round-N.jsonl` and `.err`); a
//! networked backend keeps them as rows.

use crate::error::StoreError;
use crate::records::{Round, Task};
use std::io::{Read, Write};

/// Which of a round's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// The agent's stdout: its event stream.
    Stdout,
    /// The agent's stderr.
    Stderr,
}

/// One stream of one round.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoundStream {
    pub round_id: i64,
    pub slug: String,
    pub number: u32,
    pub kind: StreamKind,
}

impl RoundStream {
    /// Stream `kind` of `round` of `task`.
    pub fn of(task: &Task, round: &Round, kind: StreamKind) -> RoundStream {
        RoundStream {
            round_id: round.id,
            slug: task.slug.clone(),
            number: round.number,
            kind,
        }
    }
}

/// The store's side of streams.
pub trait Streams {
    /// Makes the stream anew, empty, and returns its writer. What a write appends can be read
    /// as soon as the write returns.
    fn create_stream(&self, stream: &RoundStream) -> Result<Box<dyn Write + Send>, StoreError>;

    /// The stream from byte `offset` to its end as it is now; `None` while it has not been
    /// made (its agent never started, or has not yet).
    fn read_stream(
        &self,
        stream: &RoundStream,
        offset: u64,
    ) -> Result<Option<Box<dyn Read + Send>>, StoreError>;
}
