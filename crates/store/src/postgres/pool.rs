//! A small pool of connections: idle ones kept in a `Mutex<Vec<_>>`, a new one made when none
//! is idle, none was given back within [`WAIT_BEFORE_GROWING`] and fewer than [`MAX_OPEN`] are
//! open, a broken one thrown away. Past the limit a caller waits for one to be given back, for
//! a while, then connects anyway: a burst of waiters waking at once shares a few connections
//! instead of authenticating one each, and a process that holds many can still not deadlock
//! on its own pool. The connections are the process's, per URL ([`Server`]): every store the
//! process opens on a database shares them, each store keeping only its own leases. A new
//! connection is the dearest thing here (its server process loads every table's description
//! anew, and parses every statement anew: most of a short-lived round host's database time),
//! so a pool grows only when it must, and a worker that opens a store for each round it
//! starts reuses warm connections with their statements prepared (`conn.rs`). Not r2d2:
//! ganger's processes hold connections only for one statement or transaction at a time, so
//! its reaper thread and its builder would be more machinery than use, and one more
//! dependency to vet. The one connection that LISTENs is not the pool's: it belongs to the
//! listening thread (`listen.rs`).
//!
//! A server that restarts (or a link that drops for a moment) costs no write: a write
//! transaction checks its connection first ([`Pooled::ensure_open`], one round trip; a
//! restarted server closed it without the client knowing) and takes a new one if it is gone;
//! a round host's single-statement writes are sent once more on a new connection when the
//! first was gone or was ended under the statement ([`Pool::write_twice_if_cut`]); a connection idle for a
//! while is checked before a read has it; and once the pool has reached its server, a new
//! connection that fails is tried again for [`RECONNECT_FOR`], so a round host whose server
//! is back within that time goes on as if nothing happened. A read on a connection the server
//! closed a moment ago fails once (its caller looks again later, as after any failed read).
//! A pool that never reached its server fails at once: a wrong URL is not waited for.

use super::client::{Client, DbError};
use super::conn::Conn;
use super::errors::ConnectError;
use super::listen::Hub;
use crate::error::StoreError;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio_postgres::Config;

/// How many connections a pool opens before callers wait for one given back; as many are
/// kept idle.
const MAX_OPEN: usize = 8;
/// How long a caller waits for a connection given back before it opens another one (below
/// the limit): statements take a millisecond or two, a new connection several.
const WAIT_BEFORE_GROWING: Duration = Duration::from_millis(20);
/// How long a caller waits for a connection given back before it opens one past the limit.
const WAIT_FOR_FREE: Duration = Duration::from_secs(5);
/// How long a new connection may take, its login included, unless the URL says otherwise
/// (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one statement may wait for the server's answer before its connection is closed
/// and the statement fails as the server's being unreachable: well past the write lock's own
/// wait (`WRITE_WAIT`, 10 s), so that only a server that went silent meets it.
const STATEMENT_LIMIT: Duration = Duration::from_secs(30);
/// How long a pool that reached its server once keeps trying to reach it again (a restart,
/// a link down for a moment): well within a round's lease on the far side of the store.
const RECONNECT_FOR: Duration = Duration::from_secs(30);
/// A connection idle longer than this is checked (one round trip) before it is used.
const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);
/// How long that check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// A store's way to its database: the process's connections to it, shared with every other
/// store of the process opened on the same URL, and the leases this store holds.
pub(crate) struct Pool {
    server: Arc<Server>,
    /// The leases this store holds through this pool: its writes of their rounds are fenced.
    /// Not shared: two stores of one process (two hosts in a test) hold their own.
    pub(crate) fences: super::fence::Fences,
}

/// The connections of one process to one database (one URL), shared by every store the
/// process opens on it: a worker that opens a store for each round it starts reuses the
/// connections (the server's caches warm, the statements prepared) instead of
/// authenticating anew.
pub(crate) struct Server {
    config: Config,
    /// How connections are made: in TLS or not, the server's certificate checked or not.
    tls: super::tls::Tls,
    /// How long a new connection's login may take.
    login: Duration,
    /// The URL with its password hidden: what errors name.
    shown: String,
    state: Mutex<State>,
    /// Told when a connection is given back or closed.
    freed: Condvar,
    /// The listening connection's waiters, once something waited.
    hub: Mutex<Option<Arc<Hub>>>,
    /// Whether a connection ever succeeded: from then on a failed one is tried again.
    reached: AtomicBool,
    /// When the database's schema was last found current by this process.
    schema_seen: Mutex<Option<Instant>>,
}

/// The servers this process has connections to, by URL; an entry lives while a store uses it.
static SERVERS: Mutex<Vec<(String, Weak<Server>)>> = Mutex::new(Vec::new());

/// The idle connections (with when each was given back), and how many are open (idle or
/// taken).
#[derive(Default)]
struct State {
    idle: Vec<(Conn, Instant)>,
    open: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("url", &self.server.shown)
            .finish()
    }
}

impl Pool {
    /// A pool for the database at `url` (a URL or key-value connection string): the process's
    /// connections to it, made now if it has none.
    /// The password, when the connection string holds none, is looked for as
    /// [`super::password`] says, `password_file` (the configuration's) among its sources.
    pub(crate) fn new(url: &str, password_file: Option<&Path>) -> Result<Arc<Pool>, StoreError> {
        let mut servers = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
        servers.retain(|(_, server)| server.strong_count() > 0);
        let known = servers
            .iter()
            .find(|(known, _)| known == url)
            .and_then(|(_, server)| server.upgrade());
        let server = match known {
            Some(server) => server,
            None => {
                let server = Server::new(url, password_file)?;
                servers.push((url.to_owned(), Arc::downgrade(&server)));
                server
            }
        };
        Ok(Arc::new(Pool {
            server,
            fences: super::fence::Fences::default(),
        }))
    }

    /// The URL with its password hidden.
    pub(crate) fn shown(&self) -> &str {
        &self.server.shown
    }

    /// The waiters of the process's listening connection to this database.
    pub(crate) fn hub(&self) -> Result<Arc<Hub>, StoreError> {
        self.server.hub()
    }

    /// A connection: an idle one, or a new one.
    pub(crate) fn get(&self) -> Result<Pooled, StoreError> {
        self.server.get()
    }

    /// Whether this process found the schema current within `within`: a worker opens a store
    /// for every round it starts, and need not ask each time (a newer ganger's migration is
    /// still seen, `within` later).
    pub(crate) fn schema_seen_within(&self, within: Duration) -> bool {
        let seen = self
            .server
            .schema_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        seen.is_some_and(|at| at.elapsed() < within)
    }

    /// Notes that the schema was found current now.
    pub(crate) fn saw_schema(&self) {
        *self
            .server
            .schema_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }
}

impl Server {
    fn new(url: &str, password_file: Option<&Path>) -> Result<Arc<Server>, StoreError> {
        let shown = super::url::redact(url);
        let refused = |source: DbError| StoreError::Backend {
            source: Box::new(ConnectError {
                url: shown.clone(),
                source,
            }),
        };
        // `sslmode`, `sslrootcert` and `passfile` are read here, the rest by the client.
        let split = super::params::split(url);
        let mut config: Config = split
            .rest
            .parse()
            .map_err(|source| refused(DbError::Pg(source)))?;
        let tls = super::tls::Tls::new(&split).map_err(|source| refused(source.into()))?;
        config.ssl_mode(tls.mode);
        if config.get_password().is_none()
            && let Some(password) = super::password::find(&config, &split, password_file)
                .map_err(|source| refused(source.into()))?
        {
            config.password(password);
        }
        let login = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        config.connect_timeout(login);
        // A link cut under a statement (the server's host gone) is seen by the kernel once
        // what was sent stays unacknowledged this long, rather than at TCP's own 15 minutes.
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(STATEMENT_LIMIT);
        }
        if config.get_application_name().is_none() {
            config.application_name("ganger");
        }
        Ok(Arc::new(Server {
            config,
            tls,
            login,
            shown,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
            hub: Mutex::new(None),
            reached: AtomicBool::new(false),
            schema_seen: Mutex::new(None),
        }))
    }

    /// The waiters of this server's listening connection (started by the first waiter).
    fn hub(self: &Arc<Server>) -> Result<Arc<Hub>, StoreError> {
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
    fn get(self: &Arc<Server>) -> Result<Pooled, StoreError> {
        let started = Instant::now();
        let deadline = started + WAIT_FOR_FREE;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            while let Some((mut client, since)) = state.idle.pop() {
                if client.is_closed() {
                    state.open = state.open.saturating_sub(1);
                    continue;
                }
                if since.elapsed() < CHECK_AFTER_IDLE {
                    return Ok(self.pooled(client));
                }
                // The check is a round trip: made without holding the pool.
                drop(state);
                if client.is_valid(CHECK_TIMEOUT).is_ok() {
                    return Ok(self.pooled(client));
                }
                drop(client);
                state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                state.open = state.open.saturating_sub(1);
            }
            let now = Instant::now();
            // All taken: one given back within a moment is cheaper than a new connection,
            // whose server process builds its caches anew (most of a short-lived round
            // host's database time).
            let grow = state.open == 0 || now >= started + WAIT_BEFORE_GROWING;
            if (grow && state.open < MAX_OPEN) || now >= deadline {
                state.open += 1;
                break;
            }
            let until = if state.open < MAX_OPEN {
                (started + WAIT_BEFORE_GROWING).min(deadline)
            } else {
                deadline
            };
            state = self
                .freed
                .wait_timeout(state, until.saturating_duration_since(now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        drop(state);
        match self.connect() {
            Ok(client) => Ok(self.pooled(Conn::new(client))),
            Err(e) => {
                self.closed();
                Err(e)
            }
        }
    }

    fn pooled(self: &Arc<Server>, conn: Conn) -> Pooled {
        Pooled {
            conn: Some(conn),
            server: Arc::clone(self),
        }
    }

    /// One connection fewer is open.
    fn closed(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.open = state.open.saturating_sub(1);
        self.freed.notify_one();
    }

    /// A new connection, its failure an error that names the database without its password;
    /// tried again for [`RECONNECT_FOR`] once the server was reached before.
    pub(crate) fn connect(&self) -> Result<Client, StoreError> {
        let deadline = Instant::now() + RECONNECT_FOR;
        let mut pause = Duration::from_millis(100);
        loop {
            match Client::connect(
                &self.config,
                &self.tls.connector,
                self.login,
                STATEMENT_LIMIT,
            ) {
                Ok(client) => {
                    self.reached.store(true, Ordering::Relaxed);
                    return Ok(client);
                }
                Err(source) => {
                    // A server reached before and now silent is away for a while (its
                    // caller may try again later); one never reached is a wrong URL.
                    let away = self.reached.load(Ordering::Relaxed) && !is_refusal(&source);
                    if !away || Instant::now() + pause >= deadline {
                        let source = Box::new(ConnectError {
                            url: self.shown.clone(),
                            source,
                        });
                        return Err(if away {
                            StoreError::Unreachable { source }
                        } else {
                            StoreError::Backend { source }
                        });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    fn give_back(&self, client: Conn) {
        if client.is_closed() {
            self.closed();
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.idle.len() < MAX_OPEN {
            state.idle.push((client, Instant::now()));
        } else {
            state.open = state.open.saturating_sub(1);
        }
        self.freed.notify_one();
    }
}

/// A connection taken from a pool, given back when dropped.
pub(crate) struct Pooled {
    conn: Option<Conn>,
    server: Arc<Server>,
}

impl Deref for Pooled {
    type Target = Conn;

    fn deref(&self) -> &Conn {
        #[expect(clippy::expect_used, reason = "the connection is taken only by drop")]
        self.conn
            .as_ref()
            .expect("a pooled connection until dropped")
    }
}

impl DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Conn {
        #[expect(clippy::expect_used, reason = "the connection is taken only by drop")]
        self.conn
            .as_mut()
            .expect("a pooled connection until dropped")
    }
}

/// Whether `error` says the connection went away under a statement: the server shut down or
/// restarted (`57P01`..`57P03`), a connection exception (class `08`), the socket failed, or
/// the client is closed. Such a statement may be sent again on a new connection.
pub(crate) fn connection_lost(error: &postgres::Error) -> bool {
    error.is_closed()
        || error
            .code()
            .is_some_and(|code| code.code().starts_with("57P") || code.code().starts_with("08"))
        || std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
}

impl Pool {
    /// Runs one write (a statement that may be sent twice: an update to the same values, an
    /// insert its caller recognizes as already made; `again` says which try it is), and once
    /// more on a new, checked connection when the first was gone: closed unseen by a restart
    /// since it was last used, or cut under the statement (a fast shutdown ends the
    /// statements in flight). No check before the first try: the second costs a round trip
    /// only when needed.
    pub(crate) fn write_twice_if_cut<T>(
        &self,
        mut write: impl FnMut(&mut Conn, bool) -> Result<T, DbError>,
    ) -> Result<T, StoreError> {
        self.twice_if_cut(|conn, again| Ok(write(conn, again)?))
    }

    /// Runs `step` (a read, a whole transaction that did not commit when it failed, or a
    /// write that may be sent twice) as [`Pool::write_twice_if_cut`] does: once more on a new,
    /// checked connection when the first was gone.
    pub(crate) fn twice_if_cut<T>(
        &self,
        mut step: impl FnMut(&mut Conn, bool) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.get()?;
        match step(&mut conn, false) {
            Err(error) if error.is_unreachable() => {
                drop(conn);
                let mut conn = self.get()?;
                conn.ensure_open()?;
                step(&mut conn, true)
            }
            other => other,
        }
    }
}

impl Pooled {
    /// Makes sure the connection is open before a write: a closed one (the server restarted
    /// since it was last used) is replaced by a new one, so that the write is not lost to a
    /// connection that was already gone before it began.
    pub(crate) fn ensure_open(&mut self) -> Result<(), StoreError> {
        let open = self
            .conn
            .as_mut()
            .is_some_and(|conn| !conn.is_closed() && conn.is_valid(CHECK_TIMEOUT).is_ok());
        if !open {
            let fresh = self.server.connect()?;
            // The old one is closed: dropping it frees nothing of the pool's count.
            self.conn = Some(Conn::new(fresh));
        }
        Ok(())
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.server.give_back(conn);
        }
    }
}

/// Whether the server answered and refused (a wrong password, a database that does not
/// exist): trying again would only be refused again. A server starting up or shutting down
/// also answers with an error, but with `57P03` (cannot connect now) or `57P01`, which pass.
fn is_refusal(error: &DbError) -> bool {
    use postgres::error::SqlState;
    match error.as_pg().and_then(postgres::Error::code) {
        Some(code) => ![SqlState::CANNOT_CONNECT_NOW, SqlState::ADMIN_SHUTDOWN]
            .iter()
            .any(|passing| passing == code),
        None => false,
    }
}
