//! Stand-ins for what the other parts of the fleet work provide, until they are merged:
//! helper E's `crate::budget::exhausted` and the lead's `tasks.inbound` policy. Each is the
//! neutral answer (no budget spent, every task accepts), so the scheduler's behaviour with
//! them is exactly today's.

use ganger_store::{Store, Task};

/// Why the task (or its fleet) may start no more rounds: its budget is spent.
pub(crate) fn budget_exhausted(_store: &dyn Store, _task: &Task) -> Option<String> {
    None
}

/// Whether the task holds its inbound rounds (`ganger policy SLUG hold`).
pub(crate) fn holds_inbound(_task: &Task) -> bool {
    false
}
