//! Tasks: finding one, whether an agent and model may take a round, who may do what,
//! and the three verbs every operation is made of (start, fix, cancel), with the shared
//! part of the pipeline.

pub(crate) mod admission;
pub(crate) mod cancel;
pub(crate) mod fix;
pub(crate) mod fix_round;
pub mod labels;
pub(crate) mod lookup;
pub(crate) mod pipeline;
pub(crate) mod queued;
pub(crate) mod race_driver;
pub(crate) mod race_judge;
pub(crate) mod race_request;
pub mod race_spec;
pub(crate) mod rules;
pub(crate) mod start;
pub(crate) mod until_green;
