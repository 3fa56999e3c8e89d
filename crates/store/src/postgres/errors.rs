//! How PostgreSQL's errors become the store's: contention (serialization failures, deadlocks, lock
//! timeouts) is [`StoreError::Contended`], a connection lost under a statement
//! [`StoreError::Unreachable`], damaged data [`StoreError::Damaged`], and everything else
//! [`StoreError::Backend`], with the PostgreSQL error as its source. A failed connection names the
//! database by its URL with the password hidden ([`ConnectError`]). A server that did not
//! answer within its limit is [`StoreError::Unreachable`] too: its connection was closed.

use super::client::DbError;
use crate::error::StoreError;
use postgres::error::SqlState;

/// A connection to the database failed (or its URL did not parse).
#[derive(Debug, thiserror::Error)]
#[error("failed to connect to {url}")]
pub(crate) struct ConnectError {
    /// The URL with its password hidden.
    pub(crate) url: String,
    #[source]
    pub(crate) source: DbError,
}

impl From<DbError> for StoreError {
    fn from(error: DbError) -> StoreError {
        match error {
            DbError::Pg(error) => error.into(),
            DbError::Silent(_) => StoreError::Unreachable {
                source: Box::new(error),
            },
            DbError::Runtime(_) | DbError::RowCount | DbError::Tls(_) | DbError::Password(_) => {
                StoreError::Backend {
                    source: Box::new(error),
                }
            }
        }
    }
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
pub(crate) fn is_unique_violation(error: &DbError) -> bool {
    error.as_pg().is_some_and(is_unique)
}

/// Whether PostgreSQL's own error is a unique index's refusal.
pub(crate) fn is_unique(error: &postgres::Error) -> bool {
    error.code() == Some(&SqlState::UNIQUE_VIOLATION)
}
