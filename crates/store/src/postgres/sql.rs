//! PostgreSQL behind the shared SQL layer: a [`Conn`](super::conn::Conn) or one of its
//! transactions runs the shared statements, their `?N` placeholders numbered `$N` first
//! ([`numbered`]), each prepared once per connection (`conn.rs`) and within the limit of every
//! exchange (`client.rs`). A row reads into [`Cell`]s by its columns' types, and a [`Param`]
//! binds as the Rust value it holds would, checked against the type the server inferred.

use super::conn::Query;
use super::errors::is_unique;
use crate::error::StoreError;
use crate::sql::{Cell, Dialect, Param, Row, Sql, backend_error, numbered};
use postgres::types::private::BytesMut;
use postgres::types::{IsNull, ToSql, Type};
use std::error::Error;

impl<Q: Query> Sql for Q {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, StoreError> {
        Ok(Query::execute(self, &numbered(sql), &wire(params))?)
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        for row in Query::query(self, &numbered(sql), &wire(params))? {
            each(&PgRow(&row))?;
        }
        Ok(())
    }

    fn is_unique_violation(&self, error: &StoreError) -> bool {
        backend_error::<postgres::Error>(error).is_some_and(is_unique)
    }
}

/// The parameters as the client takes them.
fn wire<'p>(params: &'p [Param<'_>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

/// A row of a result.
struct PgRow<'r>(&'r postgres::Row);

impl Row for PgRow<'_> {
    fn cell(&self, index: usize) -> Result<Cell<'_>, StoreError> {
        let row = self.0;
        let Some(column) = row.columns().get(index) else {
            return Err(StoreError::Corrupt(format!("no column {index}")));
        };
        let cell = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(index)?.map(Cell::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(index)?
                .map(|v| Cell::Int(i64::from(v))),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(index)?
                .map(|v| Cell::Int(i64::from(v))),
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(index)?.map(Cell::Real),
            Type::FLOAT4 => row
                .try_get::<_, Option<f32>>(index)?
                .map(|v| Cell::Real(f64::from(v))),
            Type::BOOL => row.try_get::<_, Option<bool>>(index)?.map(Cell::Bool),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                row.try_get::<_, Option<&str>>(index)?.map(Cell::Text)
            }
            Type::BYTEA => row.try_get::<_, Option<&[u8]>>(index)?.map(Cell::Bytes),
            ref other => {
                return Err(StoreError::Corrupt(format!(
                    "column {index} is of type {other}, which ganger does not read"
                )));
            }
        };
        Ok(cell.unwrap_or(Cell::Null))
    }
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        self.encode(ty, out, false)
    }

    /// Each value says for itself which types it takes (in [`ToSql::to_sql_checked`]).
    fn accepts(_: &Type) -> bool {
        true
    }

    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        self.encode(ty, out, true)
    }
}

impl Param<'_> {
    /// Encodes the value as the Rust value it holds would be (checked against `ty` first
    /// with `checked`); a null is a null of whatever type the server inferred.
    fn encode(
        &self,
        ty: &Type,
        out: &mut BytesMut,
        checked: bool,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        fn put<T: ToSql>(
            value: &T,
            ty: &Type,
            out: &mut BytesMut,
            checked: bool,
        ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
            if checked {
                value.to_sql_checked(ty, out)
            } else {
                value.to_sql(ty, out)
            }
        }
        match self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(value) => put(value, ty, out, checked),
            Param::Real(value) => put(value, ty, out, checked),
            Param::Bool(value) => put(value, ty, out, checked),
            Param::Text(text) => put(&text.as_ref(), ty, out, checked),
            Param::Bytes(bytes) => put(bytes, ty, out, checked),
            Param::Texts(texts) => put(texts, ty, out, checked),
            Param::Ints(ints) => put(ints, ty, out, checked),
        }
    }
}
