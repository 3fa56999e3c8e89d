//! `ganger mcp`: a Model Context Protocol server whose tools are what a commander does (start,
//! wait, report, diff, fix, merge, ownership, the fleet, the journal), each one call of the
//! engine API made as the server's commander, so that ownership, generations and the journal
//! hold exactly as on the command line.
//!
//! The tools are declared with rmcp's tool macros, a file per group under `tools/`. The
//! server is a [`rmcp::ServerHandler`] ([`GangerMcp`]) over any transport: `ganger mcp`
//! serves it on stdio ([`serve_stdio`]); an HTTP front end mounts the same handler (one per
//! session) on Streamable HTTP. Engine calls are blocking: each runs on tokio's blocking pool,
//! so a long `wait` never holds up the server's other calls. Subscriptions are read by one
//! thread per commander (`watch.rs`), never on that pool.

mod http;
mod identity;
mod instructions;
mod output;
mod resources;
mod server;
mod stdio;
mod text;
mod tools;
mod watch;

pub use http::{HttpService, http_service};
pub use identity::commander_from_client;
pub use instructions::SUPERVISE_LOOP;
pub use server::{GangerMcp, MAX_SUBSCRIPTIONS};
pub use stdio::{serve_lines, serve_stdio};
pub use tools::tool_names;
pub use watch::Watcher;
