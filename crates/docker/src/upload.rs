//! Request bodies streamed from plain threads: a root filesystem read from a pipe, or a build
//! context written as a tar, goes to the daemon in chunks through a bounded channel, so that
//! hundreds of megabytes never sit in memory at once. A failure of the producer ends the body
//! with an error, which aborts the request: the daemon never commits a truncated image.

use bytes::Bytes;
use futures_util::Stream;
use std::io::{self, Read, Write};
use tokio::sync::mpsc;

/// Bytes sent to the daemon at a time.
const CHUNK: usize = 1 << 20;
/// Chunks in flight between the producer thread and the request.
const DEPTH: usize = 8;

type Item = Result<Bytes, io::Error>;

/// A writer whose bytes become the request body, chunk by chunk.
pub struct BodyWriter {
    tx: mpsc::Sender<Item>,
    buffer: Vec<u8>,
}

impl BodyWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(CHUNK),
        ));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the daemon stopped reading"))
    }

    /// Ends the body with an error, so that the request fails.
    fn fail(&self, error: io::Error) {
        let _ = self.tx.blocking_send(Err(error));
    }
}

impl Write for BodyWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// A body produced by `produce` on a thread of its own. An error it returns fails the request.
pub fn body<F>(produce: F) -> impl Stream<Item = Item> + Send + 'static
where
    F: FnOnce(&mut BodyWriter) -> io::Result<()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Item>(DEPTH);
    std::thread::spawn(move || {
        let mut writer = BodyWriter {
            tx,
            buffer: Vec::with_capacity(CHUNK),
        };
        match produce(&mut writer).and_then(|()| writer.flush()) {
            Ok(()) => {}
            Err(error) => writer.fail(error),
        }
    });
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

/// A body read from `source` until its end.
pub fn body_from_reader<R: Read + Send + 'static>(
    mut source: R,
) -> impl Stream<Item = Item> + Send + 'static {
    body(move |writer| io::copy(&mut source, writer).map(|_| ()))
}
