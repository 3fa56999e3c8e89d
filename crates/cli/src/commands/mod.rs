//! One module per command family; each turns parsed arguments into an engine call and the
//! engine's answer into output and an exit code.

pub(crate) mod agents;
pub(crate) mod canary;
pub(crate) mod clean;
pub(crate) mod demo;
pub(crate) mod doctor;
pub(crate) mod fake_llm;
pub(crate) mod fleet;
pub(crate) mod host;
pub(crate) mod image;
pub(crate) mod init;
pub(crate) mod journal;
pub(crate) mod land;
pub(crate) mod log;
pub(crate) mod mcp;
pub(crate) mod merge;
pub(crate) mod ownership;
pub(crate) mod pipeline;
pub(crate) mod race;
pub(crate) mod reference;
pub(crate) mod round;
pub(crate) mod summarize;
pub(crate) mod trees;
pub(crate) mod warm;
pub(crate) mod watch;
