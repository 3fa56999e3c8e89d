//! rusqlite behind the shared SQL layer: a connection (or a transaction, which derefs to one)
//! runs the shared statements as they are written (`?N` is SQLite's own placeholder); a row
//! reads into [`Cell`]s, and a [`Param`] binds as the value rusqlite would bind for it.
//!
//! Statements are prepared each time, not kept: most ganger commands are short processes that
//! run each statement once or twice, and statements kept hold SQLite's per-connection
//! lookaside memory, so that every other allocation of the command goes to malloc (a `start`
//! ran 9% more instructions with a cache of 128 statements than without one: 6.2 million
//! against 5.7, callgrind).

use super::errors::is_unique_violation;
use crate::error::StoreError;
use crate::sql::{Cell, Dialect, Param, Row, Sql, backend_error};
use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};

/// A connection running the shared statements.
pub(super) struct Lite<'c>(pub(super) &'c Connection);

impl Sql for Lite<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, StoreError> {
        let changed = self
            .0
            .prepare(sql)?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(changed as u64)
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut statement = self.0.prepare(sql)?;
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            each(&LiteRow(row))?;
        }
        Ok(())
    }

    fn is_unique_violation(&self, error: &StoreError) -> bool {
        backend_error::<rusqlite::Error>(error).is_some_and(is_unique_violation)
    }
}

/// A row of a result.
struct LiteRow<'s, 'r>(&'r rusqlite::Row<'s>);

impl Row for LiteRow<'_, '_> {
    fn cell(&self, index: usize) -> Result<Cell<'_>, StoreError> {
        Ok(match self.0.get_ref(index)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(value) => Cell::Int(value),
            ValueRef::Real(value) => Cell::Real(value),
            ValueRef::Text(text) => Cell::Text(std::str::from_utf8(text).map_err(|e| {
                StoreError::Corrupt(format!("column {index}: text that is not UTF-8: {e}"))
            })?),
            ValueRef::Blob(bytes) => Cell::Bytes(bytes),
        })
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Param::Null => ToSqlOutput::Owned(Value::Null),
            Param::Int(value) => ToSqlOutput::Owned(Value::Integer(*value)),
            Param::Real(value) => ToSqlOutput::Owned(Value::Real(*value)),
            Param::Bool(value) => ToSqlOutput::Owned(Value::Integer(i64::from(*value))),
            Param::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::Bytes(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
            Param::Texts(_) | Param::Ints(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "SQLite binds no arrays".into(),
                ));
            }
        })
    }
}
