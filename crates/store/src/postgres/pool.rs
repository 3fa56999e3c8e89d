//! A small pool of connections: idle clients kept in a `Mutex<Vec<Client>>`, a new one made
//! when none is idle, a broken one thrown away. Not r2d2: every ganger process is short-lived
//! or holds a handful of connections (a store, a claim's heartbeat, a waiter), so a pool with
//! limits, timeouts and a reaper thread would be more machinery than use, and one more
//! dependency for the lead to vet. Connections that LISTENed are given back only after
//! `UNLISTEN *` (see `listen.rs`), so a connection in the pool never holds a subscription.

use super::errors::ConnectError;
use crate::error::StoreError;
use postgres::{Client, Config, NoTls};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How many idle connections a pool keeps; more are closed when given back.
const MAX_IDLE: usize = 4;
/// How long a new connection may take, unless the URL says otherwise.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections to one database.
pub(crate) struct Pool {
    config: Config,
    /// The URL with its password hidden: what errors name.
    shown: String,
    idle: Mutex<Vec<Client>>,
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
            idle: Mutex::new(Vec::new()),
        }))
    }

    /// The URL with its password hidden.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// A connection: an idle one, or a new one.
    pub(crate) fn get(self: &Arc<Pool>) -> Result<Pooled, StoreError> {
        let idle = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let mut found = None;
            while let Some(client) = idle.pop() {
                if !client.is_closed() {
                    found = Some(client);
                    break;
                }
            }
            found
        };
        let client = match idle {
            Some(client) => client,
            None => self.connect()?,
        };
        Ok(Pooled {
            client: Some(client),
            pool: Arc::clone(self),
        })
    }

    /// A new connection, its failure an error that names the database without its password.
    fn connect(&self) -> Result<Client, StoreError> {
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
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(client);
        }
    }
}

/// A connection taken from a pool, given back when dropped.
pub(crate) struct Pooled {
    client: Option<Client>,
    pool: Arc<Pool>,
}

impl Pooled {
    /// Drops the connection instead of giving it back (its session state is unknown).
    pub(crate) fn discard(mut self) {
        self.client = None;
    }
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
