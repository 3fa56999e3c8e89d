//! The versioned JSON documents (`ganger.*/1`, docs/json.md) that the front ends print or
//! answer with and that no operation returns whole: each is a type here, made from the
//! engine's values, so that the command line, the MCP server and the HTTP API serialize the
//! same one as it is. The operations' own reports (`ganger.round-report/1`, `ganger.merge/1`,
//! `ganger.fleet-status/1`, ...) are the operations' types.

/// A document: its schema, then its fields in the order they are written, and `new` from
/// the fields.
macro_rules! document {
    ($(#[$attr:meta])* $name:ident($schema:literal) {
        $($(#[$field_attr:meta])* $field:ident: $ty:ty),+ $(,)?
    }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, serde::Serialize)]
        pub struct $name {
            pub schema: &'static str,
            $($(#[$field_attr])* pub $field: $ty,)+
        }

        impl $name {
            pub fn new($($field: $ty),+) -> $name {
                $name {
                    schema: $schema,
                    $($field),+
                }
            }
        }
    };
}

mod board;
mod error;
mod lists;
mod local;
mod sent;

pub use crate::api::history::RoundHistory;
pub use board::{
    FleetSummary, WebChecks, WebConflicts, WebFleets, WebJournal, WebTask, WebTasks, status_name,
};
pub use error::{ERROR_SCHEMA, ErrorDocument};
pub use lists::{
    AgentList, DiffPageDocument, FleetSubmitted, LogLineDocument, LogTail, TailLine, Workers,
};
pub use local::{
    Adopted, AgentCheck, AgentsInstall, Doctor, FileChange, ImageBuild, Images, InitSupervisor,
    InstalledAgent, Summary, WarmList, WarmStop,
};
pub use sent::{Detached, Queued, SentDocument, StillRunning};
