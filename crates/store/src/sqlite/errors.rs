//! How SQLite's errors become the store's: contention (`SQLITE_BUSY`, `SQLITE_LOCKED`) and a
//! damaged file (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) keep their meaning as their own
//! [`StoreError`] variants, and every SQLite error stays the source, so that nothing above the
//! backend names SQLite while the cause is still there to print.

use crate::error::StoreError;

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode;
        match error.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Contended {
                source: Box::new(error),
            },
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Damaged {
                source: Box::new(error),
            },
            _ => StoreError::Backend {
                source: Box::new(error),
            },
        }
    }
}

/// Whether SQLite refused a write for a unique index (a second running round, a second open
/// item of a slug, a taken slug).
pub(crate) fn is_unique_violation(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(e, _) if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
    )
}

/// Whether SQLite answered "busy" or "locked".
pub(crate) fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn sqlite_errors_keep_their_kind_and_their_cause() {
        let busy = StoreError::from(failure(rusqlite::ffi::SQLITE_BUSY));
        assert!(busy.is_busy());
        assert!(matches!(
            StoreError::from(failure(rusqlite::ffi::SQLITE_CORRUPT)),
            StoreError::Damaged { .. }
        ));
        let full = StoreError::from(failure(rusqlite::ffi::SQLITE_FULL));
        assert!(matches!(full, StoreError::Backend { .. }) && !full.is_busy());
        // The SQLite error is the source, so its text reaches whoever prints the chain.
        let source = std::error::Error::source(&full).map(ToString::to_string);
        assert_eq!(
            source,
            Some(failure(rusqlite::ffi::SQLITE_FULL).to_string())
        );
    }
}
