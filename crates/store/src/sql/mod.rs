//! The SQL both backends share: every statement, column list and row decoder of the records,
//! the queue, ownership, pipelines, evidence, claims and workers is written once here, and
//! the store's traits are implemented once, for any [`Database`]. A backend gives a
//! connection that runs statements ([`Sql`]: rusqlite's in `sqlite/conn.rs`, PostgreSQL's in
//! `postgres/sql.rs`), rows that read into cells ([`Row`]), and the ways it runs a piece of
//! work ([`Database`]): on a connection, under its write lock (SQLite's `BEGIN IMMEDIATE`,
//! PostgreSQL's advisory lock), or again on a new connection when the first was cut under it.
//! Where PostgreSQL does more than SQLite on purpose (fences on a round's writes, a
//! notification when work is queued), [`Database`] says so with a hook that SQLite leaves
//! empty. What truly differs stays with each backend: liveness, streams, pools,
//! notifications and migrations.

mod claims;
mod conflicts;
mod dialect;
mod evidence;
mod fleet_submit;
mod journal;
mod land;
mod ownership;
mod param;
mod pipeline;
mod queue;
mod races;
mod rounds;
mod row;
pub(crate) mod sessions;
mod store;
mod tallies;
mod tasks;
mod workers;

pub(crate) use dialect::{Dialect, numbered};
pub(crate) use param::{Param, bind};
pub(crate) use rounds::{ROUND_COLUMNS, round as round_row};
pub(crate) use row::{Cell, Row};
pub(crate) use store::with_tasks;

use crate::error::StoreError;
use crate::liveness::ClaimKey;

/// A connection (or a transaction on one) that runs the shared statements, written with
/// `?N` placeholders.
pub(crate) trait Sql {
    /// Which SQL it speaks.
    fn dialect(&self) -> Dialect;

    /// Runs a statement that returns no rows; how many rows it changed.
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, StoreError>;

    /// Runs a statement and hands each row it returns to `each`, in order.
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;

    /// Whether `error` is this database refusing a write for a unique index.
    fn is_unique_violation(&self, error: &StoreError) -> bool;
}

impl dyn Sql + '_ {
    /// Every row a statement returns, each read by `read`.
    pub(crate) fn rows<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl Fn(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut all = Vec::new();
        self.query_each(sql, params, &mut |row| {
            all.push(read(row)?);
            Ok(())
        })?;
        Ok(all)
    }

    /// The first row a statement returns, if any.
    pub(crate) fn first<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl Fn(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let mut found = None;
        self.query_each(sql, params, &mut |row| {
            if found.is_none() {
                found = Some(read(row)?);
            }
            Ok(())
        })?;
        Ok(found)
    }

    /// The row a statement must return.
    pub(crate) fn one<T>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        read: impl Fn(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.first(sql, params, read)?
            .ok_or_else(|| StoreError::backend(NoRow(first_words(sql))))
    }

    /// The one column of the row a statement must return.
    pub(crate) fn value<T: row::FromCell>(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<T, StoreError> {
        self.one(sql, params, |row| row.get(0))
    }
}

/// The backend's own error behind `error`, when it is one of type `E` (what the store's
/// errors keep as their source).
pub(crate) fn backend_error<E: std::error::Error + 'static>(error: &StoreError) -> Option<&E> {
    match error {
        StoreError::Backend { source } => source.downcast_ref::<E>(),
        _ => None,
    }
}

/// A statement that had to return a row returned none (the row it read was not there).
#[derive(Debug, thiserror::Error)]
#[error("the statement `{0} ...` returned no row")]
struct NoRow(String);

fn first_words(sql: &str) -> String {
    sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ")
}

/// A condition added to a statement that writes on behalf of a claim, with its parameters:
/// PostgreSQL's fence (`postgres/fence.rs`), which refuses the write once this process lost
/// the claim; nothing on SQLite, whose claims cannot be lost by a process that lives.
#[derive(Debug, Default)]
pub(crate) struct Fence {
    /// ` AND ...`, or empty.
    pub(crate) condition: String,
    pub(crate) params: Vec<Param<'static>>,
}

/// A backend whose records are SQL tables: how it runs a piece of work, and what it does
/// beyond the shared statements. Every method of the store's traits is one of these.
pub(crate) trait Database: Send {
    /// Runs `work` on a connection; each statement commits on its own.
    fn on_conn<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Runs `work` (a read, or a change that may be sent twice) on a connection, and once
    /// more on a new one when the first was cut under it: a round host's look at the store
    /// goes on through a restart of the server (PostgreSQL; SQLite runs it once).
    fn again_if_cut<T>(
        &self,
        work: impl FnMut(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Runs `work` on a connection checked open first, so that a change is not lost to a
    /// connection a restarted server closed unseen (PostgreSQL; SQLite has no server).
    fn on_checked_conn<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Runs `work` in one transaction under the write lock, committed when it returns `Ok`
    /// (rolled back otherwise): a check and the write that depends on it cannot be split by
    /// another process.
    fn write<T>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// The condition that this process has not lost the claim named by the SQL expression
    /// `claim`, its parameters numbered from `first`: added to a write made for a claim.
    fn fence(&self, claim: &str, first: usize) -> Fence {
        let _ = (claim, first);
        Fence::default()
    }

    /// [`StoreError::ClaimLost`] when this process held `claim` and lost it: a round whose
    /// claim was lost before it was recorded is not recorded.
    fn refuse_lost(&self, sql: &mut dyn Sql, claim: &ClaimKey) -> Result<(), StoreError> {
        let _ = (sql, claim);
        Ok(())
    }

    /// Tells the schedulers, once what `sql` is doing commits, that work was queued or put
    /// back in the queue (PostgreSQL's NOTIFY; SQLite's schedulers poll).
    fn wake_schedulers(&self, sql: &mut dyn Sql) -> Result<(), StoreError> {
        let _ = sql;
        Ok(())
    }

    /// A number that changes whenever another connection commits
    /// ([`QueueStore::data_version`](crate::QueueStore::data_version)).
    fn committed_version(&self) -> Result<i64, StoreError>;
}
