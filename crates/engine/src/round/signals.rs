//! Signals to a round host (SIGINT, SIGTERM, SIGHUP) wake its loop through a socket pair and
//! say which signal came, so that the host stops its agent with the grace period and records
//! why, instead of dying and leaving the round to be found interrupted.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The signals that stop a round.
pub(crate) const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// A host's signal watch.
pub(crate) struct SignalWatch {
    wake: UnixStream,
    last: Arc<AtomicUsize>,
    ids: Vec<signal_hook::SigId>,
}

impl SignalWatch {
    /// Starts watching the stop signals.
    pub(crate) fn install() -> std::io::Result<SignalWatch> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        let last = Arc::new(AtomicUsize::new(0));
        let mut ids = Vec::new();
        for signal in STOP_SIGNALS {
            ids.push(signal_hook::flag::register_usize(
                signal,
                Arc::clone(&last),
                signal as usize,
            )?);
            ids.push(signal_hook::low_level::pipe::register(
                signal,
                write.try_clone()?,
            )?);
        }
        Ok(SignalWatch {
            wake: read,
            last,
            ids,
        })
    }

    /// The descriptor that becomes readable when a signal arrives.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// The last stop signal received, if any (and drains the wake-ups).
    pub(crate) fn received(&self) -> Option<i32> {
        let mut buffer = [0u8; 64];
        while matches!((&self.wake).read(&mut buffer), Ok(n) if n > 0) {}
        match self.last.load(Ordering::SeqCst) {
            0 => None,
            signal => i32::try_from(signal).ok(),
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// A signal's name, for reasons.
pub(crate) fn signal_name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}
