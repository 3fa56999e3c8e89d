//! A row of a result, one trait over rusqlite's and PostgreSQL's: a backend reads a column
//! into a [`Cell`] (its own types behind it), and the shared decoders read cells into Rust
//! values with [`FromCell`]. Integers narrow here, checked; JSON columns hold serde values. A
//! value that does not read back is reported as corrupt state, never silently dropped.

use crate::error::StoreError;
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// One column's value as the database returned it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell<'r> {
    Null,
    Int(i64),
    Real(f64),
    Bool(bool),
    Text(&'r str),
    Bytes(&'r [u8]),
}

impl Cell<'_> {
    fn what(self) -> &'static str {
        match self {
            Cell::Null => "null",
            Cell::Int(_) => "an integer",
            Cell::Real(_) => "a real",
            Cell::Bool(_) => "a boolean",
            Cell::Text(_) => "text",
            Cell::Bytes(_) => "bytes",
        }
    }
}

/// A row of a result.
pub(crate) trait Row {
    /// Column `index` (from 0).
    fn cell(&self, index: usize) -> Result<Cell<'_>, StoreError>;
}

impl dyn Row + '_ {
    /// Column `index` as a `T`. Inlined into each decoder: `ganger status` over 10,000 tasks
    /// reads 90,000 cells.
    #[inline(always)]
    pub(crate) fn get<T: FromCell>(&self, index: usize) -> Result<T, StoreError> {
        T::from_cell(self.cell(index)?)
            .map_err(|why| StoreError::Corrupt(format!("column {index}: {why}")))
    }

    /// Column `index` (called `column`), text holding JSON, read into a `T`.
    pub(crate) fn json<T: DeserializeOwned>(
        &self,
        index: usize,
        column: &str,
    ) -> Result<T, StoreError> {
        match self.cell(index)? {
            Cell::Text(text) => serde_json::from_str(text)
                .map_err(|e| StoreError::Corrupt(format!("column {column}: {e}"))),
            other => Err(StoreError::Corrupt(format!(
                "column {column}: JSON text expected, found {}",
                other.what()
            ))),
        }
    }

    /// [`json`](Self::json) of a column that may be null.
    pub(crate) fn opt_json<T: DeserializeOwned>(
        &self,
        index: usize,
        column: &str,
    ) -> Result<Option<T>, StoreError> {
        match self.cell(index)? {
            Cell::Null => Ok(None),
            _ => self.json(index, column).map(Some),
        }
    }
}

/// A Rust value a column reads into.
pub(crate) trait FromCell: Sized {
    /// The value, or why the cell is not one.
    fn from_cell(cell: Cell<'_>) -> Result<Self, String>;
}

fn expected<T>(what: &str, cell: Cell<'_>) -> Result<T, String> {
    Err(format!("{what} expected, found {}", cell.what()))
}

impl FromCell for i64 {
    #[inline(always)]
    fn from_cell(cell: Cell<'_>) -> Result<i64, String> {
        match cell {
            Cell::Int(value) => Ok(value),
            other => expected("an integer", other),
        }
    }
}

/// Integers kept narrower than the database's: checked on the way back.
macro_rules! narrowed {
    ($($int:ty),*) => {$(
        impl FromCell for $int {
            fn from_cell(cell: Cell<'_>) -> Result<$int, String> {
                let wide = i64::from_cell(cell)?;
                <$int>::try_from(wide).map_err(|_| format!("{wide} is out of range"))
            }
        }
    )*};
}
narrowed!(i32, u32, u64);

impl FromCell for f64 {
    fn from_cell(cell: Cell<'_>) -> Result<f64, String> {
        match cell {
            Cell::Real(value) => Ok(value),
            // SQLite keeps a whole number in a REAL column's expression as an integer.
            Cell::Int(value) => Ok(value as f64),
            other => expected("a real", other),
        }
    }
}

impl FromCell for bool {
    fn from_cell(cell: Cell<'_>) -> Result<bool, String> {
        match cell {
            Cell::Bool(value) => Ok(value),
            // SQLite's booleans are integers.
            Cell::Int(value) => Ok(value != 0),
            other => expected("a boolean", other),
        }
    }
}

impl FromCell for String {
    #[inline(always)]
    fn from_cell(cell: Cell<'_>) -> Result<String, String> {
        match cell {
            Cell::Text(text) => Ok(text.to_owned()),
            other => expected("text", other),
        }
    }
}

impl FromCell for PathBuf {
    fn from_cell(cell: Cell<'_>) -> Result<PathBuf, String> {
        String::from_cell(cell).map(PathBuf::from)
    }
}

impl FromCell for Vec<u8> {
    fn from_cell(cell: Cell<'_>) -> Result<Vec<u8>, String> {
        match cell {
            Cell::Bytes(bytes) => Ok(bytes.to_vec()),
            other => expected("bytes", other),
        }
    }
}

impl<T: FromCell> FromCell for Option<T> {
    #[inline(always)]
    fn from_cell(cell: Cell<'_>) -> Result<Option<T>, String> {
        match cell {
            Cell::Null => Ok(None),
            other => T::from_cell(other).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Cells(Vec<Cell<'static>>);

    impl Row for Cells {
        fn cell(&self, index: usize) -> Result<Cell<'_>, StoreError> {
            Ok(self.0[index])
        }
    }

    #[test]
    fn cells_read_into_values_and_a_wrong_one_is_corrupt_state() {
        let cells = Cells(vec![
            Cell::Int(3),
            Cell::Int(1),
            Cell::Null,
            Cell::Text("[\"a\"]"),
            Cell::Int(-1),
            Cell::Text("{"),
        ]);
        let row: &dyn Row = &cells;
        assert_eq!(row.get::<u32>(0).unwrap(), 3);
        assert!(row.get::<bool>(1).unwrap());
        assert_eq!(row.get::<f64>(0).unwrap(), 3.0);
        assert_eq!(row.get::<Option<String>>(2).unwrap(), None);
        assert_eq!(row.json::<Vec<String>>(3, "rw").unwrap(), ["a"]);
        assert_eq!(row.opt_json::<Vec<String>>(2, "rw").unwrap(), None);
        for error in [
            row.get::<u32>(4).unwrap_err(),
            row.get::<String>(0).unwrap_err(),
            row.json::<Vec<String>>(5, "rw").unwrap_err(),
        ] {
            assert!(matches!(error, StoreError::Corrupt(_)), "{error:?}");
        }
    }
}
