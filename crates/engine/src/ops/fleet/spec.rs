//! What the fleet's queue keeps of a round: a start's options (`StartSpec`, on the task
//! floor, which a race's queued attempts use too) and the prompt of a round that continues.

pub use crate::task::queued::StartSpec;

/// The prompt of a round that continues an interrupted one.
pub const CONTINUE: &str = "continue";
