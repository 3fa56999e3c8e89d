//! A round's streams: what its agent printed on stdout (the raw event stream, the round's
//! record of events) and on stderr, byte for byte (known keys redacted by the host before they
//! get here). The host appends while the round runs; anyone reads from an offset, or follows
//! a stream until its round ends ([`Backend::follow_stream`](crate::Backend::follow_stream)).
//! SQLite keeps them as files beside the database (`tasks/SLUG/round-N.jsonl` and `.err`); a
//! networked backend keeps them as rows. Beside them, the agent's saved session of a task
//! (its conversation file), kept so that the task's next round can continue it on another
//! host: a row in both backends.

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
    /// The round's model gateway: one JSON line per request it forwarded or refused.
    Gateway,
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

/// An agent's saved session as a round of its task left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptSession {
    /// The round that kept it.
    pub round: u32,
    /// The session's name (the agent's id for it).
    pub session: String,
    /// The session's file, keys redacted.
    pub data: Vec<u8>,
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

    /// Keeps `session` as round `round` of the task left it, in place of what an earlier
    /// round kept; never in place of a later round's (a host that lost its round and writes
    /// late).
    fn keep_session(&self, task_id: i64, session: &KeptSession) -> Result<(), StoreError>;

    /// The session the task's latest round kept, if any.
    fn kept_session(&self, task_id: i64) -> Result<Option<KeptSession>, StoreError>;

    /// Packs the streams of round `round_id`, once it has ended, into one compressed object
    /// each, read back byte for byte as before; how many it packed (0: none to pack, the
    /// round runs, or the backend keeps its streams as files).
    fn compact_streams(&self, round_id: i64) -> Result<u32, StoreError> {
        let _ = round_id;
        Ok(0)
    }

    /// Ended rounds whose streams are not packed yet, oldest first, at most `limit`.
    fn unpacked_rounds(&self, limit: u32) -> Result<Vec<i64>, StoreError> {
        let _ = limit;
        Ok(Vec::new())
    }
}
