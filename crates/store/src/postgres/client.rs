//! A blocking connection to PostgreSQL whose every exchange has a limit: the login (the socket,
//! the startup and the authentication, not the socket alone, which is all the `postgres`
//! crate's `connect_timeout` bounds) and each statement. A server that accepts a connection and
//! never answers (stopped, wedged, a proxy in front of nothing) would otherwise hold a command
//! for ever: seen at 400 s and counting with the `postgres` crate's blocking client, which has
//! no limit on either.
//!
//! It is the `postgres` crate's shape over `tokio-postgres`: a runtime of one thread per
//! connection, driven only while the caller waits, polling the connection beside the request.
//! What differs is that each wait is `tokio::time::timeout`, and a connection whose exchange
//! ran out is closed at once (its socket dropped): the protocol's state is unknown after it,
//! and nothing is left waiting behind (no thread, no socket).

use postgres::types::ToSql;
use postgres::{Row, Statement};
use std::collections::VecDeque;
use std::future::Future;
use std::task::Poll;
use std::time::Duration;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{AsyncMessage, Connection, Notification, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

/// What a connection's bytes go through: the socket, or TLS over it.
type Stream = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream;

/// A statement or login that failed, or got no answer in time.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DbError {
    #[error(transparent)]
    Pg(#[from] postgres::Error),
    /// The server did not answer within the limit; the connection was closed.
    #[error("the server did not answer within {} s", .0.as_secs())]
    Silent(Duration),
    /// The connection's runtime could not be made (threads or descriptors ran out).
    #[error("failed to start a connection's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// A statement that must return one row (or at most one) returned another number.
    #[error("the statement returned an unexpected number of rows")]
    RowCount,
    /// TLS could not be set up as the connection string asks (its roots unreadable).
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
    /// The password file could not be used.
    #[error(transparent)]
    Password(#[from] super::password::PasswordError),
}

impl DbError {
    /// The database's own error, if it is one.
    pub(crate) fn as_pg(&self) -> Option<&postgres::Error> {
        match self {
            DbError::Pg(error) => Some(error),
            DbError::Silent(_)
            | DbError::Runtime(_)
            | DbError::RowCount
            | DbError::Tls(_)
            | DbError::Password(_) => None,
        }
    }
}

/// The connection's side that moves bytes: the runtime that drives it, the connection itself
/// (gone once closed), the notifications it heard, and the limit of one exchange.
pub(crate) struct Link {
    runtime: tokio::runtime::Runtime,
    connection: Option<Connection<Socket, Stream>>,
    notifications: VecDeque<Notification>,
    limit: Duration,
}

impl Link {
    /// Runs `work` (a request on this connection's client) to its end, driving the connection
    /// meanwhile, for at most the exchange's limit.
    pub(crate) fn exchange<T>(
        &mut self,
        work: impl Future<Output = Result<T, postgres::Error>>,
    ) -> Result<T, DbError> {
        self.exchange_within(self.limit, work)
    }

    /// [`Link::exchange`] with a limit of its own.
    pub(crate) fn exchange_within<T>(
        &mut self,
        limit: Duration,
        work: impl Future<Output = Result<T, postgres::Error>>,
    ) -> Result<T, DbError> {
        let Link {
            runtime,
            connection,
            notifications,
            ..
        } = self;
        let mut work = std::pin::pin!(work);
        // The timer is made inside the runtime, whose clock it needs.
        let answered = runtime.block_on(async {
            tokio::time::timeout(
                limit,
                std::future::poll_fn(|cx| {
                    drive(connection, notifications, cx);
                    work.as_mut().poll(cx)
                }),
            )
            .await
        });
        match answered {
            Ok(result) => Ok(result?),
            Err(_) => {
                // Mid-exchange: what the server would send next is unknown. Closed, so that
                // the pool throws it away.
                *connection = None;
                Err(DbError::Silent(limit))
            }
        }
    }

    /// The next notification heard, waiting at most `limit` for one; `None` when none came.
    pub(crate) fn notification(
        &mut self,
        limit: Duration,
    ) -> Result<Option<Notification>, DbError> {
        if let Some(heard) = self.notifications.pop_front() {
            return Ok(Some(heard));
        }
        let Link {
            runtime,
            connection,
            notifications,
            ..
        } = self;
        let _ = runtime.block_on(async {
            tokio::time::timeout(
                limit,
                std::future::poll_fn(|cx| {
                    drive(connection, notifications, cx);
                    if notifications.is_empty() && connection.is_some() {
                        Poll::Pending
                    } else {
                        Poll::Ready(())
                    }
                }),
            )
            .await
        });
        Ok(self.notifications.pop_front())
    }

    /// Whether the connection is gone (closed by the server, failed, or ended here).
    pub(crate) fn is_closed(&self) -> bool {
        self.connection.is_none()
    }
}

/// Reads what the connection has for the client (answers go to their requests on their own;
/// notifications are kept), and drops the connection once it ended: its requests then fail at
/// once instead of waiting.
fn drive(
    connection: &mut Option<Connection<Socket, Stream>>,
    notifications: &mut VecDeque<Notification>,
    cx: &mut std::task::Context<'_>,
) {
    while let Some(open) = connection.as_mut() {
        match open.poll_message(cx) {
            Poll::Ready(Some(Ok(AsyncMessage::Notification(heard)))) => {
                notifications.push_back(heard);
            }
            // Notices (and what later versions add) are not for ganger.
            Poll::Ready(Some(Ok(_))) => {}
            Poll::Ready(Some(Err(_)) | None) => *connection = None,
            Poll::Pending => return,
        }
    }
}

/// A connection: its client (which makes requests) and its [`Link`].
pub(crate) struct Client {
    client: tokio_postgres::Client,
    link: Link,
}

impl Client {
    /// Connects with `config` through `tls`, the whole login taking at most `login`; each
    /// exchange after it at most `limit`.
    pub(crate) fn connect(
        config: &tokio_postgres::Config,
        tls: &MakeRustlsConnect,
        login: Duration,
        limit: Duration,
    ) -> Result<Client, DbError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(DbError::Runtime)?;
        let connected = runtime
            .block_on(async { tokio::time::timeout(login, config.connect(tls.clone())).await });
        let (client, connection) = match connected {
            Ok(connected) => connected?,
            // The future and its socket are dropped here: nothing is left waiting.
            Err(_) => return Err(DbError::Silent(login)),
        };
        Ok(Client {
            client,
            link: Link {
                runtime,
                connection: Some(connection),
                notifications: VecDeque::new(),
                limit,
            },
        })
    }

    /// The client and the link, to make a request on one and wait on the other.
    pub(crate) fn parts(&mut self) -> (&mut tokio_postgres::Client, &mut Link) {
        (&mut self.client, &mut self.link)
    }

    /// Whether the connection is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.link.is_closed() || self.client.is_closed()
    }

    /// Whether the server answers a trivial statement within `limit`.
    pub(crate) fn is_valid(&mut self, limit: Duration) -> Result<(), DbError> {
        let (client, link) = self.parts();
        link.exchange_within(limit, async { client.simple_query("").await.map(|_| ()) })
    }

    /// Statements as text, several at once, no parameters.
    pub(crate) fn batch_execute(&mut self, sql: &str) -> Result<(), DbError> {
        let (client, link) = self.parts();
        link.exchange(client.batch_execute(sql))
    }

    /// The next notification heard on this connection (after a `LISTEN`), waiting at most
    /// `limit`.
    pub(crate) fn notification(
        &mut self,
        limit: Duration,
    ) -> Result<Option<Notification>, DbError> {
        self.link.notification(limit)
    }
}

/// The requests [`super::conn`] makes, the same on a client and in a transaction.
pub(crate) trait Requests {
    fn prepare(&mut self, sql: &str) -> Result<Statement, DbError>;
    fn query(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, DbError>;
    fn execute(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, DbError>;
    fn batch_execute(&mut self, sql: &str) -> Result<(), DbError>;
}

impl Requests for Client {
    fn prepare(&mut self, sql: &str) -> Result<Statement, DbError> {
        let (client, link) = self.parts();
        link.exchange(client.prepare(sql))
    }

    fn query(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, DbError> {
        let (client, link) = self.parts();
        link.exchange(client.query(statement, params))
    }

    fn execute(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, DbError> {
        let (client, link) = self.parts();
        link.exchange(client.execute(statement, params))
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), DbError> {
        Client::batch_execute(self, sql)
    }
}

/// A transaction on a [`Client`]: rolled back when dropped without [`Transaction::commit`],
/// and waited for (within the limit), so that the write lock it took is free when it is gone.
pub(crate) struct Transaction<'a> {
    tx: Option<tokio_postgres::Transaction<'a>>,
    link: &'a mut Link,
}

impl<'a> Transaction<'a> {
    /// Begins a transaction on `client`.
    pub(crate) fn begin(client: &'a mut Client) -> Result<Transaction<'a>, DbError> {
        let (client, link) = client.parts();
        let tx = link.exchange(client.transaction())?;
        Ok(Transaction { tx: Some(tx), link })
    }

    pub(crate) fn commit(mut self) -> Result<(), DbError> {
        match self.tx.take() {
            Some(tx) => self.link.exchange(tx.commit()),
            None => Ok(()),
        }
    }

    fn tx(&mut self) -> Result<(&tokio_postgres::Transaction<'a>, &mut Link), DbError> {
        match &self.tx {
            Some(tx) => Ok((tx, &mut *self.link)),
            None => Err(DbError::Silent(Duration::ZERO)),
        }
    }
}

impl Requests for Transaction<'_> {
    fn prepare(&mut self, sql: &str) -> Result<Statement, DbError> {
        let (tx, link) = self.tx()?;
        link.exchange(tx.prepare(sql))
    }

    fn query(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, DbError> {
        let (tx, link) = self.tx()?;
        link.exchange(tx.query(statement, params))
    }

    fn execute(
        &mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, DbError> {
        let (tx, link) = self.tx()?;
        link.exchange(tx.execute(statement, params))
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), DbError> {
        let (tx, link) = self.tx()?;
        link.exchange(tx.batch_execute(sql))
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            // A failed rollback (the server gone, or silent past the limit) closed the
            // connection: the server ends the transaction with it.
            let _ = self.link.exchange(tx.rollback());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::time::Instant;

    /// A server that accepts connections and reads what it is sent, and never answers.
    fn silent_server() -> (u16, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut sink = [0_u8; 1024];
            // Until the client goes away: reading 0 bytes means it closed its end.
            while socket.read(&mut sink).is_ok_and(|n| n > 0) {}
        });
        (port, held)
    }

    #[test]
    fn a_server_that_accepts_and_never_answers_is_left_at_the_login_limit() {
        let (port, held) = silent_server();
        let config: tokio_postgres::Config = format!("postgres://u:p@127.0.0.1:{port}/db")
            .parse()
            .unwrap();
        let began = Instant::now();
        let tls = crate::postgres::tls::Tls::new(&crate::postgres::params::split(""))
            .unwrap()
            .connector;
        let refused = Client::connect(
            &config,
            &tls,
            Duration::from_millis(300),
            Duration::from_secs(1),
        );
        let waited = began.elapsed();
        assert!(
            matches!(refused, Err(DbError::Silent(limit)) if limit == Duration::from_millis(300)),
            "{:?}",
            refused.err()
        );
        assert!(waited < Duration::from_secs(5), "waited {waited:?}");
        // The connection was closed when the login was given up: the server sees its end.
        held.join().unwrap();
    }
}
