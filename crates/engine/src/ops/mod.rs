//! Operations: what a front end asks for, each made of the floors below and none of
//! another operation.

pub(crate) mod adopt;
pub(crate) mod attach;
pub mod checkout;
pub(crate) mod clean;
pub(crate) mod diff;
pub mod fleet;
pub(crate) mod host_entry;
pub(crate) mod init;
pub mod journal;
pub(crate) mod land;
pub(crate) mod log;
pub(crate) mod merge;
pub(crate) mod ownership;
pub mod pipeline;
pub mod race;
pub(crate) mod rewind;
pub(crate) mod status;
pub mod trees;
pub(crate) mod wait;
