//! The sessions of `/mcp` and how long one its client left may live. A session is in use while
//! its client sends requests or holds its stream (`GET /mcp`) open; one unused for
//! [`SESSION_IDLE`] is ended (its subscriptions with it), as `DELETE /mcp` ends one at once.
//! A commander holds at most [`MAX_SESSIONS`]: a new one takes the place of the one unused
//! longest, and with every one in use it is refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a session may go unused before it is ended.
pub const SESSION_IDLE: Duration = Duration::from_secs(300);

/// How often unused sessions are looked for.
pub const REAP_EVERY: Duration = Duration::from_secs(30);

/// The most sessions one commander holds.
pub const MAX_SESSIONS: usize = 64;

/// The sessions of one commander.
#[derive(Debug, Default)]
pub struct SessionBook {
    sessions: Mutex<HashMap<String, Use>>,
}

#[derive(Debug, Clone, Copy)]
struct Use {
    /// The last request.
    last: Instant,
    /// Streams open.
    streams: usize,
}

/// A session's stream, open while this lives.
#[derive(Debug)]
pub struct OpenStream {
    book: Arc<SessionBook>,
    id: String,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        let mut sessions = self.book.lock();
        if let Some(session) = sessions.get_mut(&self.id) {
            session.streams = session.streams.saturating_sub(1);
            session.last = Instant::now();
        }
    }
}

impl SessionBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Use>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request in session `id` at `now`.
    pub fn note(&self, id: &str, now: Instant) {
        self.lock()
            .entry(id.to_owned())
            .and_modify(|session| session.last = now)
            .or_insert(Use {
                last: now,
                streams: 0,
            });
    }

    /// Session `id`'s stream, open until the guard is dropped.
    pub fn open_stream(self: &Arc<Self>, id: &str) -> OpenStream {
        self.lock()
            .entry(id.to_owned())
            .and_modify(|session| session.streams += 1)
            .or_insert(Use {
                last: Instant::now(),
                streams: 1,
            });
        OpenStream {
            book: self.clone(),
            id: id.to_owned(),
        }
    }

    /// Session `id` ended.
    pub fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    /// How many sessions there are.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// Every session.
    pub fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// The sessions unused for `idle` at `now`.
    pub fn unused(&self, now: Instant, idle: Duration) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, s)| s.streams == 0 && now.saturating_duration_since(s.last) >= idle)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The session unused longest (no stream open), if there is one.
    pub fn unused_longest(&self) -> Option<String> {
        self.lock()
            .iter()
            .filter(|(_, s)| s.streams == 0)
            .min_by_key(|(_, s)| s.last)
            .map(|(id, _)| id.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_unused_when_it_sent_nothing_and_holds_no_stream() {
        let book = Arc::new(SessionBook::default());
        let start = Instant::now();
        book.note("a", start);
        book.note("b", start);
        book.note("c", start + Duration::from_secs(5));
        let stream = book.open_stream("b");
        let later = start + Duration::from_secs(400);
        let mut unused = book.unused(later, SESSION_IDLE);
        unused.sort();
        assert_eq!(unused, ["a", "c"]);
        assert_eq!(book.unused_longest().as_deref(), Some("a"));
        // The stream closed: used just now, unused from SESSION_IDLE on.
        drop(stream);
        let now = Instant::now();
        assert!(!book.unused(now, SESSION_IDLE).contains(&"b".to_owned()));
        assert!(
            book.unused(now + SESSION_IDLE, SESSION_IDLE)
                .contains(&"b".to_owned())
        );
        book.forget("a");
        assert_eq!(book.count(), 2);
    }
}
