//! A small pool of connections: idle clients kept in a `Mutex<Vec<Client>>`, a new one made
//! when none is idle and fewer than [`MAX_OPEN`] are open, a broken one thrown away. Past the
//! limit a caller waits for one to be given back, for a while, then connects anyway: a burst
//! of waiters waking at once shares a few connections instead of authenticating one each,
//! and a process that holds many can still not deadlock on its own pool. Not r2d2: ganger's
//! processes hold connections only for one statement or transaction at a time, so its
//! reaper thread and its builder would be more machinery than use, and one more dependency
//! to vet. The one connection that LISTENs is not the pool's: it belongs to the listening
//! thread (`listen.rs`).

use super::errors::ConnectError;
use super::listen::Hub;
use crate::error::StoreError;
use postgres::{Client, Config, NoTls};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How many connections a pool opens before callers wait for one given back; as many are
/// kept idle.
const MAX_OPEN: usize = 8;
/// How long a caller waits for a connection given back before it opens one past the limit.
const WAIT_FOR_FREE: Duration = Duration::from_secs(5);
/// How long a new connection may take, unless the URL says otherwise.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections to one database.
pub(crate) struct Pool {
    config: Config,
    /// The URL with its password hidden: what errors name.
    shown: String,
    state: Mutex<State>,
    /// Told when a connection is given back or closed.
    freed: Condvar,
    /// The listening connection's waiters, once something waited.
    hub: Mutex<Option<Arc<Hub>>>,
}

/// The idle connections, and how many are open (idle or taken).
#[derive(Default)]
struct State {
    idle: Vec<Client>,
    open: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("url", &self.shown).finish()
    }
}

impl Pool {
    /// A pool for the database at `url` (a URL or key-value connection string).
    pub(crate) fn new(url: &str) -> Result<Arc<Pool>, StoreError> {
        let shown = super::url::redact(url);
        let mut config: Config = url.parse().map_err(|source| StoreError::Backend {
            source: Box::new(ConnectError {
                url: shown.clone(),
                source,
            }),
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("ganger");
        }
        Ok(Arc::new(Pool {
            config,
            shown,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
            hub: Mutex::new(None),
        }))
    }

    /// The URL with its password hidden.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The waiters of this pool's listening connection (started by the first waiter).
    pub(crate) fn hub(self: &Arc<Pool>) -> Result<Arc<Hub>, StoreError> {
        let mut hub = self.hub.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = &*hub {
            return Ok(Arc::clone(hub));
        }
        let started = Hub::start(self).map_err(|source| StoreError::Io {
            path: "pg-listen".into(),
            source,
        })?;
        Ok(Arc::clone(hub.insert(started)))
    }

    /// A connection: an idle one, or a new one.
    pub(crate) fn get(self: &Arc<Pool>) -> Result<Pooled, StoreError> {
        let deadline = Instant::now() + WAIT_FOR_FREE;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            while let Some(client) = state.idle.pop() {
                if !client.is_closed() {
                    return Ok(self.pooled(client));
                }
                state.open = state.open.saturating_sub(1);
            }
            let now = Instant::now();
            if state.open < MAX_OPEN || now >= deadline {
                state.open += 1;
                break;
            }
            state = self
                .freed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(state);
        match self.connect() {
            Ok(client) => Ok(self.pooled(client)),
            Err(e) => {
                self.closed();
                Err(e)
            }
        }
    }

    fn pooled(self: &Arc<Pool>, client: Client) -> Pooled {
        Pooled {
            client: Some(client),
            pool: Arc::clone(self),
        }
    }

    /// One connection fewer is open.
    fn closed(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.open = state.open.saturating_sub(1);
        self.freed.notify_one();
    }

    /// A new connection, its failure an error that names the database without its password.
    pub(crate) fn connect(&self) -> Result<Client, StoreError> {
        self.config
            .connect(NoTls)
            .map_err(|source| StoreError::Backend {
                source: Box::new(ConnectError {
                    url: self.shown.clone(),
                    source,
                }),
            })
    }

    fn give_back(&self, client: Client) {
        if client.is_closed() {
            self.closed();
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.idle.len() < MAX_OPEN {
            state.idle.push(client);
        } else {
            state.open = state.open.saturating_sub(1);
        }
        self.freed.notify_one();
    }
}

/// A connection taken from a pool, given back when dropped.
pub(crate) struct Pooled {
    client: Option<Client>,
    pool: Arc<Pool>,
}

impl Deref for Pooled {
    type Target = Client;

    fn deref(&self) -> &Client {
        #[expect(clippy::expect_used, reason = "the client is taken only by drop")]
        self.client.as_ref().expect("a pooled client until dropped")
    }
}

impl DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Client {
        #[expect(clippy::expect_used, reason = "the client is taken only by drop")]
        self.client.as_mut().expect("a pooled client until dropped")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            self.pool.give_back(client);
        }
    }
}
