//! The foundation: values and pure rules every floor uses (errors, notices, slugs,
//! briefs, commanders, redaction, the configuration, tokens). Uses nothing of the engine's.

pub(crate) mod brief;
pub mod clean_report;
pub(crate) mod commander;
pub mod config;
pub(crate) mod error;
pub(crate) mod faults;
pub mod install;
pub(crate) mod notice;
pub(crate) mod redact;
pub(crate) mod redact_stream;
pub mod scripted;
pub(crate) mod slug;
pub(crate) mod tokens;
