//! Fault injection for tests, in debug builds only: `GANGER_FAULT_ANSWER_LOST=STEP` makes the
//! named step (`create_task`, `begin_round`) answer as a connection cut right after its
//! commit would: the write is kept and the answer is `Unreachable`. A restarted PostgreSQL did
//! this to a worker's start; a test can now do it on demand, on either backend. Release
//! builds compile it to nothing.

use crate::error::StoreError;

/// After `step`'s commit: the lost answer when `GANGER_FAULT_ANSWER_LOST` names it (debug
/// builds only).
pub(crate) fn answer_lost(step: &str) -> Result<(), StoreError> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    match std::env::var("GANGER_FAULT_ANSWER_LOST") {
        Ok(named) if named.split(',').any(|s| s == step) => Err(StoreError::Unreachable {
            source: format!("fault: the answer to {step} was lost after its commit").into(),
        }),
        _ => Ok(()),
    }
}
