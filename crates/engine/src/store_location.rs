//! Where a repository's store is: the SQLite file in `.ganger/` (the default), or a PostgreSQL
//! server named by `GANGER_STORE` (which `--store` sets for the command and every process it
//! starts) or, below it, by `[store] url` in the configuration. A URL is never shown with its
//! password: errors and `Debug` name it through the store's redaction.

use crate::error::{EngineError, Result};

/// The variable naming the store (`postgres://...`, or `sqlite` for the default).
pub const STORE_ENV: &str = "GANGER_STORE";

/// Where the store is.
#[derive(Clone, PartialEq, Eq, Default)]
pub enum StoreLocation {
    /// `state.db` in the main checkout's `.ganger/`.
    #[default]
    Local,
    /// A PostgreSQL database, by its URL.
    Postgres(String),
}

impl std::fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::Local => f.write_str("Local"),
            StoreLocation::Postgres(url) => f
                .debug_tuple("Postgres")
                .field(&ganger_store::redact_url(url))
                .finish(),
        }
    }
}

impl StoreLocation {
    /// The store `GANGER_STORE` names, else `configured` (`[store] url`), else the local one.
    pub fn resolve(configured: Option<&str>) -> Result<StoreLocation> {
        match std::env::var(STORE_ENV) {
            Ok(value) if !value.trim().is_empty() => parse(STORE_ENV, &value),
            Ok(_) | Err(std::env::VarError::NotPresent) => match configured {
                Some(value) => parse("store.url in the configuration", value),
                None => Ok(StoreLocation::Local),
            },
            Err(std::env::VarError::NotUnicode(_)) => Err(EngineError::invalid(format!(
                "{STORE_ENV} is not valid UTF-8"
            ))),
        }
    }

    /// The URL, for a networked store.
    pub fn url(&self) -> Option<&str> {
        match self {
            StoreLocation::Local => None,
            StoreLocation::Postgres(url) => Some(url),
        }
    }
}

/// Reads a store's name as `source` gave it.
pub fn parse(source: &str, value: &str) -> Result<StoreLocation> {
    let value = value.trim();
    if value == "sqlite" {
        return Ok(StoreLocation::Local);
    }
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        return Ok(StoreLocation::Postgres(value.to_owned()));
    }
    // Only the part before the first `:` is shown: the rest of a misspelt URL may hold a
    // password the redaction does not recognize.
    let shown = value.split(':').next().unwrap_or_default();
    Err(EngineError::invalid(format!(
        "{source}: not a store (it starts with {shown:?}): give postgres://USER:PASSWORD@HOST:PORT/DATABASE, or sqlite"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_sqlite_are_read_and_anything_else_is_refused_without_its_password() {
        assert_eq!(
            parse("x", " postgres://u:p@127.0.0.1:5/db ").unwrap(),
            StoreLocation::Postgres("postgres://u:p@127.0.0.1:5/db".into())
        );
        assert_eq!(
            parse("x", "postgresql://h/db").unwrap().url(),
            Some("postgresql://h/db")
        );
        assert_eq!(parse("x", "sqlite").unwrap(), StoreLocation::Local);
        let refused = parse("GANGER_STORE", "postgress://u:secret@h/db").unwrap_err();
        assert!(refused.message.contains("GANGER_STORE"), "{refused:?}");
        assert!(refused.message.contains("\"postgress\""), "{refused:?}");
        assert!(!refused.message.contains("secret"), "{refused:?}");
        let shown = format!(
            "{:?}",
            StoreLocation::Postgres("postgres://u:secret@h/db".into())
        );
        assert!(
            !shown.contains("secret") && shown.contains("u:***@h/db"),
            "{shown}"
        );
    }
}
