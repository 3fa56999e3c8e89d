//! A check's output as it runs: both of its streams redacted of the round's keys as they
//! come (a check may print what the agent left behind, a key included), then copied, in the
//! order they come, to the check's log file, with the last bytes kept in memory for the tail.
//! The tail is cut from redacted bytes only, so it can never keep a piece of a key.

use crate::base::redact::Redactor;
use crate::base::redact_stream::copy_redacted;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// How many of the last bytes are kept for the tail.
const KEEP: usize = 64 * 1024;

/// The shared end the stream readers write to.
#[derive(Clone)]
pub(crate) struct Capture {
    inner: Arc<Mutex<Inner>>,
    redactor: Redactor,
}

struct Inner {
    log: File,
    last: Vec<u8>,
}

impl Capture {
    pub(crate) fn new(log: File, redactor: Redactor) -> Capture {
        Capture {
            inner: Arc::new(Mutex::new(Inner {
                log,
                last: Vec::new(),
            })),
            redactor,
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

    /// Copies `stream` until it closes, redacted, on a thread of its own.
    pub(crate) fn follow(&self, stream: File) -> std::thread::JoinHandle<()> {
        let capture = self.clone();
        std::thread::spawn(move || {
            let redactor = capture.redactor.clone();
            copy_redacted(stream, redactor, &mut |clean, _| {
                if !clean.is_empty() {
                    capture.append(clean);
                }
            });
        })
    }

    /// Copies the stdout and stderr of a process just started, each on a thread of its own.
    pub(crate) fn follow_output(
        &self,
        running: &mut ganger_sandbox::RunningAgent,
    ) -> Vec<std::thread::JoinHandle<()>> {
        [running.take_stdout(), running.take_stderr()]
            .into_iter()
            .flatten()
            .map(|stream| self.follow(stream))
            .collect()
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
