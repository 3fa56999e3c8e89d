//! Packing a finished round's streams: its chunks read in order, gzipped into one object in
//! `streams.packed`, and deleted, in one transaction that holds the stream's row. A reader's
//! one statement (`streams::read_from`) sees the rows or the object, both the same bytes, so
//! a `log` or a follower in the middle of reading (a page at a time, from an offset) reads on
//! as if nothing happened. Only an ended round is packed: its host writes no more, and an
//! append to a packed stream is refused (`streams.rs`).

use super::PgStore;
use super::conn::Query;
use crate::error::StoreError;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::{Read, Write};

/// Packs every unpacked stream of `round_id` if the round has ended; how many.
/// A process that held the round's claim and lost it (a host paused past its lease) packs
/// nothing of it, as it writes nothing else of it (`fence.rs`): the scheduler's pass packs it.
pub(crate) fn compact(store: &PgStore, round_id: i64) -> Result<u32, StoreError> {
    let (names, fences) = store.pool.fences.arrays();
    store.twice(|conn| {
        let mut tx = conn.transaction()?;
        let kinds = tx.query(
            &format!(
                "SELECT s.kind FROM streams s JOIN rounds r ON r.id = s.round_id \
                 WHERE s.round_id = $1 AND s.packed IS NULL AND r.status <> 'running' \
                 AND {} ORDER BY s.kind FOR UPDATE OF s",
                super::fence::still_held("r.lock_path", "$2", "$3")
            ),
            &[&round_id, &names, &fences],
        )?;
        let kinds: Vec<String> = kinds
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()?;
        // Every stream's chunks in one read, in order, then one statement per stream.
        let chunks = tx.query(
            "SELECT kind, bytes FROM stream_chunks WHERE round_id = $1 AND kind = ANY($2) \
             ORDER BY kind, start",
            &[&round_id, &kinds],
        )?;
        let mut packed = 0;
        for kind in &kinds {
            let mut gzip = GzEncoder::new(Vec::new(), Compression::default());
            for chunk in &chunks {
                let of: &str = chunk.try_get(0)?;
                if of == kind {
                    let bytes: &[u8] = chunk.try_get(1)?;
                    gzip.write_all(bytes).map_err(packing)?;
                }
            }
            let object = gzip.finish().map_err(packing)?;
            tx.execute(
                "WITH gone AS (DELETE FROM stream_chunks WHERE round_id = $1 AND kind = $2) \
                 UPDATE streams SET packed = $3 WHERE round_id = $1 AND kind = $2",
                &[&round_id, kind, &object],
            )?;
            packed += 1;
        }
        tx.commit()?;
        Ok(packed)
    })
}

/// Ended rounds with a stream still in rows, oldest first.
pub(crate) fn unpacked(store: &PgStore, limit: u32) -> Result<Vec<i64>, StoreError> {
    store.twice(|conn| {
        let rows = conn.query(
            "SELECT DISTINCT s.round_id FROM streams s JOIN rounds r ON r.id = s.round_id \
             WHERE s.packed IS NULL AND r.status <> 'running' ORDER BY s.round_id LIMIT $1",
            &[&i64::from(limit)],
        )?;
        rows.iter()
            .map(|row| row.try_get(0).map_err(StoreError::from))
            .collect()
    })
}

/// A packed stream's bytes from `offset`.
pub(crate) fn unpack(object: &[u8], offset: u64) -> Result<Vec<u8>, StoreError> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(object)
        .read_to_end(&mut bytes)
        .map_err(|e| StoreError::Corrupt(format!("a packed stream cannot be read: {e}")))?;
    let skip = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    bytes.drain(..skip);
    Ok(bytes)
}

fn packing(e: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("a stream cannot be packed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_object_unpacks_to_its_bytes_from_any_offset() {
        let mut gzip = GzEncoder::new(Vec::new(), Compression::default());
        gzip.write_all(b"hello, world").unwrap();
        let object = gzip.finish().unwrap();
        assert_eq!(unpack(&object, 0).unwrap(), b"hello, world");
        assert_eq!(unpack(&object, 7).unwrap(), b"world");
        assert_eq!(unpack(&object, 99).unwrap(), b"");
    }
}
