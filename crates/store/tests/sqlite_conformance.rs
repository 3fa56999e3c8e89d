//! The store's conformance suite (`conformance/`) run against the SQLite backend: each test
//! gets a database of its own in a temporary directory, and every connection is a
//! `SqliteStore` opened on it, as each ganger process opens its own.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod conformance;

use ganger_store::{Backend, SqliteStore};

/// A state directory of its own.
struct SqliteSite(tempfile::TempDir);

impl SqliteSite {
    fn new() -> SqliteSite {
        SqliteSite(tempfile::tempdir().unwrap())
    }
}

impl conformance::Site for SqliteSite {
    fn connect(&self) -> Box<dyn Backend> {
        Box::new(SqliteStore::open(&self.0.path().join("state.db")).unwrap())
    }
}

conformance::suite!(SqliteSite::new());
