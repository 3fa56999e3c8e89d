//! PostgreSQL's streams: `streams` says a stream was made (and which making of it),
//! `stream_chunks` holds its bytes as appended, each chunk at its byte offset. A write is one
//! statement that appends a chunk and notifies [`STREAM_APPEND`], so it can be read (and a
//! follower wakes) as soon as the write returns. Kept sessions are rows, as in every backend
//! (`sql/sessions.rs`).

use super::PgStore;
use super::conn::Query;
use super::fence::still_held;
use super::listen::STREAM_APPEND;
use super::pool::Pool;
use crate::error::StoreError;
use crate::sql::sessions;
use crate::streams::{KeptSession, RoundStream, StreamKind, Streams};
use std::io::{self, Cursor, Read, Write};
use std::sync::Arc;

/// A stream's kind as stored.
pub(crate) fn kind_text(kind: StreamKind) -> &'static str {
    match kind {
        StreamKind::Stdout => "stdout",
        StreamKind::Stderr => "stderr",
        StreamKind::Gateway => "gateway",
    }
}

/// What an append to `stream` is announced with.
pub(crate) fn payload(stream: &RoundStream) -> String {
    format!("{}:{}", stream.round_id, kind_text(stream.kind))
}

/// The stream from byte `offset` as it is now; `None` while it has not been made. One
/// statement, so one snapshot: the stream's rows, or its packed object once its round has
/// ended and it was packed (`compact.rs`), never a mix.
pub(crate) fn read_from(
    conn: &mut impl Query,
    stream: &RoundStream,
    offset: u64,
) -> Result<Option<Vec<u8>>, StoreError> {
    let wanted = super::big(offset);
    let found = conn.query(
        "SELECT s.packed, c.start, c.bytes FROM streams s \
         LEFT JOIN stream_chunks c ON c.round_id = s.round_id AND c.kind = s.kind \
             AND s.packed IS NULL AND c.start + length(c.bytes) > $3 \
         WHERE s.round_id = $1 AND s.kind = $2 ORDER BY c.start",
        &[&stream.round_id, &kind_text(stream.kind), &wanted],
    )?;
    let Some(first) = found.first() else {
        return Ok(None);
    };
    if let Some(object) = first.try_get::<_, Option<&[u8]>>(0)? {
        return super::compact::unpack(object, offset).map(Some);
    }
    let mut bytes = Vec::new();
    for row in &found {
        let Some(start) = row.try_get::<_, Option<i64>>(1)? else {
            continue;
        };
        let chunk: &[u8] = row.try_get(2)?;
        let skip = usize::try_from((wanted - start).max(0)).unwrap_or(usize::MAX);
        bytes.extend_from_slice(chunk.get(skip..).unwrap_or_default());
    }
    Ok(Some(bytes))
}

/// Appends to one making of a stream.
struct ChunkWriter {
    pool: Arc<Pool>,
    stream: RoundStream,
    generation: i64,
    /// Where the next chunk starts.
    offset: i64,
}

impl Write for ChunkWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let (names, fences) = self.pool.fences.arrays();
        let sql = format!(
            "WITH appended AS ( \
                 INSERT INTO stream_chunks (round_id, kind, start, bytes) \
                 SELECT s.round_id, s.kind, $3::bigint, $4::bytea FROM streams s \
                 JOIN rounds ON rounds.id = s.round_id \
                 WHERE s.round_id = $1 AND s.kind = $2 AND s.generation = $5 \
                     AND s.packed IS NULL AND {} \
                 RETURNING 1) \
             SELECT pg_notify($6, $7) FROM appended",
            still_held("rounds.lock_path", "$8", "$9")
        );
        let kind = kind_text(self.stream.kind);
        let payload = payload(&self.stream);
        let appended = self
            .pool
            .write_twice_if_cut(|conn, again| {
                let sent = conn.query(
                    &sql,
                    &[
                        &self.stream.round_id,
                        &kind,
                        &self.offset,
                        &buf,
                        &self.generation,
                        &STREAM_APPEND,
                        &payload,
                        &names,
                        &fences,
                    ],
                );
                match sent {
                    // Sent again after the first try's answer was lost: the chunk at this
                    // offset is that try's, which had committed.
                    Err(e) if again && super::errors::is_unique_violation(&e) => Ok(true),
                    other => other.map(|rows| !rows.is_empty()),
                }
            })
            .map_err(io::Error::other)?;
        if !appended {
            return Err(io::Error::other(format!(
                "round {} of {}: this writer's {:?} stream was made anew, or its host lost the round's claim",
                self.stream.number, self.stream.slug, self.stream.kind
            )));
        }
        self.offset += super::big(buf.len() as u64);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Streams for PgStore {
    fn create_stream(&self, stream: &RoundStream) -> Result<Box<dyn Write + Send>, StoreError> {
        // Sent again on a new connection when the first was gone: a second try only makes
        // the generation one higher, and the writer holds whichever it was given.
        // One statement (no transaction around it): the stream's row made or its generation
        // moved on, and the chunks of any earlier generation deleted.
        let generation: i64 = self.twice(|conn| {
            let row = conn.query_one(
                "WITH made AS ( \
                   INSERT INTO streams (round_id, kind, generation) VALUES ($1, $2, 1) \
                   ON CONFLICT (round_id, kind) DO UPDATE SET \
                   generation = streams.generation + 1, packed = NULL \
                   RETURNING generation), \
                 gone AS (DELETE FROM stream_chunks WHERE round_id = $1 AND kind = $2) \
                 SELECT generation FROM made",
                &[&stream.round_id, &kind_text(stream.kind)],
            )?;
            Ok(row.try_get(0)?)
        })?;
        Ok(Box::new(ChunkWriter {
            pool: Arc::clone(&self.pool),
            stream: stream.clone(),
            generation,
            offset: 0,
        }))
    }

    fn read_stream(
        &self,
        stream: &RoundStream,
        offset: u64,
    ) -> Result<Option<Box<dyn Read + Send>>, StoreError> {
        Ok(self
            .twice(|conn| read_from(conn, stream, offset))?
            .map(|bytes| Box::new(Cursor::new(bytes)) as Box<dyn Read + Send>))
    }

    fn keep_session(&self, task_id: i64, kept: &KeptSession) -> Result<(), StoreError> {
        sessions::keep(self, task_id, kept)
    }

    fn kept_session(&self, task_id: i64) -> Result<Option<KeptSession>, StoreError> {
        sessions::kept(self, task_id)
    }

    fn compact_streams(&self, round_id: i64) -> Result<u32, StoreError> {
        super::compact::compact(self, round_id)
    }

    fn unpacked_rounds(&self, limit: u32) -> Result<Vec<i64>, StoreError> {
        super::compact::unpacked(self, limit)
    }
}
