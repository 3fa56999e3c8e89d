//! How PostgreSQL's errors become the store's: contention (serialization failures, deadlocks, lock
//! timeouts) is [`StoreError::Contended`], a connection lost under a statement
//! [`StoreError::Unreachable`], damaged data [`StoreError::Damaged`], and everything else
//! [`StoreError::Backend`], with the PostgreSQL error as its source. A failed connection names the
//! database by its URL with the password hidden ([`ConnectError`]).

use crate::error::StoreError;
use postgres::error::SqlState;

/// A connection to the database failed (or its URL did not parse).
#[derive(Debug, thiserror::Error)]
#[error("failed to connect to {url}")]
pub(crate) struct ConnectError {
    /// The URL with its password hidden.
    pub(crate) url: String,
    #[source]
    pub(crate) source: postgres::Error,
}

impl From<postgres::Error> for StoreError {
    fn from(error: postgres::Error) -> StoreError {
        let code = error.code();
        let contended = [
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::T_R_DEADLOCK_DETECTED,
            SqlState::LOCK_NOT_AVAILABLE,
        ];
        let damaged = [SqlState::DATA_CORRUPTED, SqlState::INDEX_CORRUPTED];
        if code.is_some_and(|c| contended.contains(c)) {
            StoreError::Contended {
                source: Box::new(error),
            }
        } else if super::pool::connection_lost(&error) {
            StoreError::Unreachable {
                source: Box::new(error),
            }
        } else if code.is_some_and(|c| damaged.contains(c)) {
            StoreError::Damaged {
                source: Box::new(error),
            }
        } else {
            StoreError::Backend {
                source: Box::new(error),
            }
        }
    }
}

/// Whether PostgreSQL refused a write for a unique index (a second running round, a second
/// open item of a slug, a taken slug).
pub(crate) fn is_unique_violation(error: &postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}
