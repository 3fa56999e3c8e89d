//! SQLite's streams: files beside the database, `tasks/SLUG/round-N.jsonl` (stdout),
//! `.err` (stderr) and `.gateway.jsonl` (the model gateway's requests), written unbuffered so that a reader sees each write at once. Kept sessions
//! are rows, as in every backend (`sql/sessions.rs`).

use super::SqliteStore;
use crate::error::StoreError;
use crate::sql::sessions;
use crate::streams::{KeptSession, RoundStream, StreamKind, Streams};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

impl SqliteStore {
    /// The file of `stream`.
    fn stream_file(&self, stream: &RoundStream) -> PathBuf {
        let ext = match stream.kind {
            StreamKind::Stdout => "jsonl",
            StreamKind::Stderr => "err",
            StreamKind::Gateway => "gateway.jsonl",
        };
        self.state.round_file(&stream.slug, stream.number, ext)
    }
}

impl Streams for SqliteStore {
    fn create_stream(&self, stream: &RoundStream) -> Result<Box<dyn Write + Send>, StoreError> {
        let path = self.stream_file(stream);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let file = File::create(&path).map_err(|source| StoreError::Io { path, source })?;
        Ok(Box::new(file))
    }

    fn read_stream(
        &self,
        stream: &RoundStream,
        offset: u64,
    ) -> Result<Option<Box<dyn Read + Send>>, StoreError> {
        let path = self.stream_file(stream);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        if offset > 0 {
            file.seek(SeekFrom::Start(offset))
                .map_err(|source| StoreError::Io { path, source })?;
        }
        Ok(Some(Box::new(file)))
    }

    fn keep_session(&self, task_id: i64, kept: &KeptSession) -> Result<(), StoreError> {
        sessions::keep(self, task_id, kept)
    }

    fn kept_session(&self, task_id: i64) -> Result<Option<KeptSession>, StoreError> {
        sessions::kept(self, task_id)
    }
}
