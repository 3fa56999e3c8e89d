//! A statement's parameters, one type for both backends: the shared statements bind
//! [`Param`]s, and each backend turns them into its own (`sqlite/conn.rs` for rusqlite,
//! `postgres/sql.rs` for PostgreSQL's wire types). Integers are `i64` everywhere (PostgreSQL's
//! columns are all BIGINT); a `u64` beyond it saturates.

use crate::error::StoreError;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// One parameter of a statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param<'a> {
    Null,
    Int(i64),
    Real(f64),
    Bool(bool),
    Text(Cow<'a, str>),
    Bytes(&'a [u8]),
    /// Arrays of text and of integers: PostgreSQL's fences bind them; SQLite binds none.
    Texts(Vec<String>),
    Ints(Vec<i64>),
}

impl Param<'_> {
    /// `value` in its JSON encoding, as the store's JSON columns hold it.
    pub(crate) fn json<T: serde::Serialize + ?Sized>(
        value: &T,
    ) -> Result<Param<'static>, StoreError> {
        serde_json::to_string(value)
            .map(|text| Param::Text(Cow::Owned(text)))
            .map_err(|e| StoreError::Corrupt(e.to_string()))
    }
}

/// The parameters of a statement, each converted with [`Param::from`]: `&bind![id, slug]`.
macro_rules! bind {
    ($($value:expr),* $(,)?) => {
        [$($crate::sql::Param::from($value)),*]
    };
}
pub(crate) use bind;

impl From<i64> for Param<'_> {
    fn from(value: i64) -> Self {
        Param::Int(value)
    }
}

impl From<i32> for Param<'_> {
    fn from(value: i32) -> Self {
        Param::Int(i64::from(value))
    }
}

impl From<u32> for Param<'_> {
    fn from(value: u32) -> Self {
        Param::Int(i64::from(value))
    }
}

impl From<u64> for Param<'_> {
    fn from(value: u64) -> Self {
        Param::Int(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Param<'_> {
    fn from(value: f64) -> Self {
        Param::Real(value)
    }
}

impl From<bool> for Param<'_> {
    fn from(value: bool) -> Self {
        Param::Bool(value)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(value: &'a str) -> Self {
        Param::Text(Cow::Borrowed(value))
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(value: &'a String) -> Self {
        Param::Text(Cow::Borrowed(value))
    }
}

impl From<String> for Param<'_> {
    fn from(value: String) -> Self {
        Param::Text(Cow::Owned(value))
    }
}

/// A path as text (lossy: ganger's paths are UTF-8).
impl<'a> From<&'a Path> for Param<'a> {
    fn from(value: &'a Path) -> Self {
        Param::Text(value.to_string_lossy())
    }
}

impl<'a> From<&'a PathBuf> for Param<'a> {
    fn from(value: &'a PathBuf) -> Self {
        Param::from(value.as_path())
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(value: &'a [u8]) -> Self {
        Param::Bytes(value)
    }
}

impl<'a> From<&'a Vec<u8>> for Param<'a> {
    fn from(value: &'a Vec<u8>) -> Self {
        Param::Bytes(value)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Param::Null, Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_bind_as_the_columns_hold_them() {
        let path = PathBuf::from("/w/t");
        assert_eq!(
            bind![7_u32, u64::MAX, None::<&str>, Some("a"), &path, true],
            [
                Param::Int(7),
                Param::Int(i64::MAX),
                Param::Null,
                Param::Text(Cow::Borrowed("a")),
                Param::Text(Cow::Borrowed("/w/t")),
                Param::Bool(true),
            ]
        );
        assert_eq!(
            Param::json(&["x"]).unwrap(),
            Param::Text(Cow::Owned("[\"x\"]".into()))
        );
    }
}
