//! A connection that prepares each statement once: [`Conn`] keeps the statements it prepared
//! by their text, and its transactions ([`Tx`]) use and add to them. A statement sent as text
//! is parsed, analysed and planned by the server every time; a prepared one is parsed once
//! per connection and, after a few runs, planned once, which is most of the database's time
//! for a worker's short statements. Every query of the backend goes through [`Query`]: a
//! [`Conn`] has no other way to send one.
//!
//! A statement that fails is forgotten (prepared again next time): a schema changed under a
//! long-lived connection (a newer ganger migrated) costs one failed statement, not a stuck
//! one.

use super::client::{Client, DbError, Requests, Transaction};
use postgres::types::ToSql;
use postgres::{Row, Statement};
use std::collections::HashMap;
use std::time::Duration;

/// How many prepared statements a connection keeps; past it, it starts afresh.
const KEPT: usize = 200;

/// Statements prepared on one connection, by their text.
#[derive(Default)]
struct Prepared {
    by_text: HashMap<String, Statement>,
}

impl Prepared {
    fn get(&mut self, client: &mut impl Requests, sql: &str) -> Result<Statement, DbError> {
        if let Some(statement) = self.by_text.get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql)?;
        if self.by_text.len() >= KEPT {
            self.by_text.clear();
        }
        self.by_text.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Runs `run` with `sql` prepared; a failure forgets the statement.
    fn run<C: Requests, T>(
        &mut self,
        client: &mut C,
        sql: &str,
        run: impl FnOnce(&mut C, &Statement) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let statement = self.get(client, sql)?;
        let result = run(client, &statement);
        if result.is_err() {
            self.by_text.remove(sql);
        }
        result
    }
}

/// Sends statements: a [`Conn`] or one of its transactions.
pub(crate) trait Query {
    fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, DbError>;
    fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, DbError>;
    fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, DbError>;
    fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, DbError>;
    /// Statements as text, not prepared (several at once, no parameters).
    fn batch_execute(&mut self, sql: &str) -> Result<(), DbError>;
}

/// The one row a statement must return, as the `postgres` crate says when it returns another
/// number.
fn one(rows: Vec<Row>) -> Result<Row, DbError> {
    let mut rows = rows.into_iter();
    match (rows.next(), rows.next()) {
        (Some(row), None) => Ok(row),
        _ => Err(DbError::RowCount),
    }
}

/// At most one row.
fn at_most_one(rows: Vec<Row>) -> Result<Option<Row>, DbError> {
    let mut rows = rows.into_iter();
    match (rows.next(), rows.next()) {
        (row, None) => Ok(row),
        _ => Err(DbError::RowCount),
    }
}

/// Implements [`Query`] for a type with a client (`$client`) and its [`Prepared`] (`$prepared`).
macro_rules! prepared_queries {
    ($client:ident, $prepared:ident) => {
        fn query(
            &mut self,
            sql: &str,
            params: &[&(dyn ToSql + Sync)],
        ) -> Result<Vec<Row>, DbError> {
            self.$prepared
                .run(&mut self.$client, sql, |c, s| c.query(s, params))
        }

        fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, DbError> {
            self.query(sql, params).and_then(one)
        }

        fn query_opt(
            &mut self,
            sql: &str,
            params: &[&(dyn ToSql + Sync)],
        ) -> Result<Option<Row>, DbError> {
            self.query(sql, params).and_then(at_most_one)
        }

        fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, DbError> {
            self.$prepared
                .run(&mut self.$client, sql, |c, s| c.execute(s, params))
        }

        fn batch_execute(&mut self, sql: &str) -> Result<(), DbError> {
            self.$client.batch_execute(sql)
        }
    };
}

/// A connection and the statements prepared on it.
pub(crate) struct Conn {
    client: Client,
    prepared: Prepared,
}

impl Conn {
    pub(crate) fn new(client: Client) -> Conn {
        Conn {
            client,
            prepared: Prepared::default(),
        }
    }

    /// Begins a transaction.
    pub(crate) fn transaction(&mut self) -> Result<Tx<'_>, DbError> {
        Ok(Tx {
            tx: Transaction::begin(&mut self.client)?,
            prepared: &mut self.prepared,
        })
    }

    /// Whether the client knows its connection is closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Whether the server answers within `timeout` (one round trip).
    pub(crate) fn is_valid(&mut self, timeout: Duration) -> Result<(), DbError> {
        self.client.is_valid(timeout)
    }
}

impl Query for Conn {
    prepared_queries!(client, prepared);
}

/// A transaction of a [`Conn`], preparing on it.
pub(crate) struct Tx<'a> {
    tx: Transaction<'a>,
    prepared: &'a mut Prepared,
}

impl Tx<'_> {
    pub(crate) fn commit(self) -> Result<(), DbError> {
        self.tx.commit()
    }
}

impl Query for Tx<'_> {
    prepared_queries!(tx, prepared);
}
