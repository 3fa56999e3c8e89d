//! A check's output as it runs: both of its streams copied, in the order they come, to the
//! check's log file, with the last bytes kept in memory for the tail.

use std::fs::File;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

/// How many of the last bytes are kept for the tail.
const KEEP: usize = 64 * 1024;

/// The shared end the stream readers write to.
#[derive(Clone)]
pub(crate) struct Capture {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    log: File,
    last: Vec<u8>,
}

impl Capture {
    pub(crate) fn new(log: File) -> Capture {
        Capture {
            inner: Arc::new(Mutex::new(Inner {
                log,
                last: Vec::new(),
            })),
        }
    }

    fn append(&self, bytes: &[u8]) {
        let mut inner = match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        let _ = inner.log.write_all(bytes);
        inner.last.extend_from_slice(bytes);
        if inner.last.len() > 2 * KEEP {
            let cut = inner.last.len() - KEEP;
            inner.last.drain(..cut);
        }
    }

    /// Copies `stream` until it closes, on a thread of its own.
    pub(crate) fn follow(&self, mut stream: File) -> std::thread::JoinHandle<()> {
        let capture = self.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            loop {
                match stream.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => capture.append(&buffer[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        })
    }

    /// The last bytes written.
    pub(crate) fn last(&self) -> Vec<u8> {
        let inner = match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        let start = inner.last.len().saturating_sub(KEEP);
        inner.last[start..].to_vec()
    }
}
