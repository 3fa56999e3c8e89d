//! Where a repository's store is: the SQLite file in `.ganger/` (the default), or a PostgreSQL
//! server the user named (`--store`, else `GANGER_STORE`: the front end reads them, [`named`])
//! or, below it, `[store] url` in the configuration. The processes ganger starts of itself (a
//! detached round host, a warm host) are handed the store in their `GANGER_STORE`
//! ([`StoreLocation::handed`]), never on a command line. A URL is never shown with its
//! password: errors and `Debug` name it through the store's redaction.

use crate::base::error::{EngineError, Result};
use std::ffi::{OsStr, OsString};

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
    /// The store the user `named` ([`named`]), else `configured` (`[store] url`), else the
    /// local one.
    pub fn resolve(
        named: Option<StoreLocation>,
        configured: Option<&str>,
    ) -> Result<StoreLocation> {
        match (named, configured) {
            (Some(named), _) => Ok(named),
            (None, Some(value)) => parse("store.url in the configuration", value),
            (None, None) => Ok(StoreLocation::Local),
        }
    }

    /// What a process ganger starts of itself is handed to find the same store: its
    /// `GANGER_STORE`, in its environment (never on a command line, where a password would be
    /// seen by every user of the machine).
    pub fn handed(&self) -> (OsString, OsString) {
        let value = match self {
            StoreLocation::Local => "sqlite",
            StoreLocation::Postgres(url) => url,
        };
        (STORE_ENV.into(), value.into())
    }

    /// The URL, for a networked store.
    pub fn url(&self) -> Option<&str> {
        match self {
            StoreLocation::Local => None,
            StoreLocation::Postgres(url) => Some(url),
        }
    }
}

/// The store the user named: `flag` (`--store`), else `env` (the value of `GANGER_STORE`; an
/// empty one names none); `None` when neither does. Read once, at the front end's edge.
pub fn named(flag: Option<&str>, env: Option<&OsStr>) -> Result<Option<StoreLocation>> {
    if let Some(flag) = flag {
        return parse("--store", flag).map(Some);
    }
    match env.map(OsStr::to_str) {
        None => Ok(None),
        Some(Some(value)) if value.trim().is_empty() => Ok(None),
        Some(Some(value)) => parse(STORE_ENV, value).map(Some),
        Some(None) => Err(EngineError::invalid(format!(
            "{STORE_ENV} is not valid UTF-8"
        ))),
    }
}

/// Reads a store's name as `source` gave it: `sqlite`, a `postgres://` URL, or libpq's
/// `key=value` form (`host=db.example user=ganger password=...`). No refusal echoes the text:
/// whatever follows its first word may be a password.
pub fn parse(source: &str, value: &str) -> Result<StoreLocation> {
    let value = value.trim();
    if value == "sqlite" {
        return Ok(StoreLocation::Local);
    }
    let url = value.starts_with("postgres://") || value.starts_with("postgresql://");
    if url || is_key_value(value) {
        return match ganger_store::check_url(value) {
            Ok(()) => Ok(StoreLocation::Postgres(value.to_owned())),
            Err(why) => Err(EngineError::invalid(format!(
                "{source}: not a store: {why} in the PostgreSQL connection string"
            ))),
        };
    }
    // Only the part before the first `:` is shown: the rest of a misspelt URL may hold a
    // password the redaction does not recognize.
    let shown = value
        .split([':', ' ', '='])
        .next()
        .unwrap_or_default()
        .chars()
        .take(20)
        .collect::<String>();
    Err(EngineError::invalid(format!(
        "{source}: not a store (it starts with {shown:?}): give postgres://USER:PASSWORD@HOST:PORT/DATABASE, \
         host=HOST user=USER password=PASSWORD dbname=DATABASE, or sqlite"
    )))
}

/// Whether `text` begins as libpq's key-value form does: a key, then `=`.
fn is_key_value(text: &str) -> bool {
    let key_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    key_end > 0
        && text[..key_end].starts_with(|c: char| c.is_ascii_alphabetic())
        && text[key_end..].trim_start().starts_with('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_outranks_the_variable_which_outranks_the_configuration() {
        let pg = |db: &str| StoreLocation::Postgres(format!("postgres://h/{db}"));
        let env = OsStr::new("postgres://h/env");
        assert_eq!(
            named(Some("postgres://h/flag"), Some(env)).unwrap(),
            Some(pg("flag"))
        );
        assert_eq!(
            named(Some("sqlite"), Some(env)).unwrap(),
            Some(StoreLocation::Local)
        );
        assert_eq!(named(None, Some(env)).unwrap(), Some(pg("env")));
        assert_eq!(named(None, Some(OsStr::new(" "))).unwrap(), None);
        assert_eq!(named(None, None).unwrap(), None);
        let refused = named(None, Some(OsStr::new("mysql://h"))).unwrap_err();
        assert!(refused.message.starts_with("GANGER_STORE:"), "{refused:?}");
        let configured = Some("postgres://h/conf");
        assert_eq!(
            StoreLocation::resolve(Some(pg("env")), configured).unwrap(),
            pg("env")
        );
        assert_eq!(
            StoreLocation::resolve(None, configured).unwrap(),
            pg("conf")
        );
        assert_eq!(
            StoreLocation::resolve(None, None).unwrap(),
            StoreLocation::Local
        );
        assert_eq!(
            pg("x").handed(),
            ("GANGER_STORE".into(), "postgres://h/x".into())
        );
        assert_eq!(StoreLocation::Local.handed().1, "sqlite");
    }

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
        let key_value = "host=127.0.0.1 port=5 user=u password=hunter2secret dbname=db";
        assert_eq!(
            parse("x", key_value).unwrap(),
            StoreLocation::Postgres(key_value.into())
        );

        let refused = parse("GANGER_STORE", "postgress://u:secret@h/db").unwrap_err();
        assert!(refused.message.contains("GANGER_STORE"), "{refused:?}");
        assert!(refused.message.contains("\"postgress\""), "{refused:?}");
        assert!(!refused.message.contains("secret"), "{refused:?}");
        for (text, why) in [
            ("host=h port=hunter2secret", "port"),
            ("postgres://u:hunter2secret@h:notaport/db", "port"),
        ] {
            let refused = parse("--store", text).unwrap_err();
            assert!(refused.message.contains(why), "{refused:?}");
            assert!(!refused.message.contains("hunter2secret"), "{refused:?}");
        }
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
