//! ganger's HTTP front end, served by `ganger serve --listen`: a JSON API over the engine API
//! (tasks, rounds, reports, checks, diffs, the journal, fleets, the queue, and the actions),
//! live events as server-sent events that resume from `Last-Event-ID`, the OpenAPI
//! description generated from the code, and the dashboard page. Every API request carries a
//! token that names a commander; the engine acts as that commander, so ownership holds as on
//! the CLI (README, "The dashboard and the HTTP API").

mod board_feed;
mod bounded_body;
pub mod connections;
mod dashboard;
mod events_board;
mod events_task;
mod extract;
mod guard;
mod guarded_body;
pub mod listen;
mod mcp_route;
mod mcp_sessions;
pub mod metrics;
mod openapi;
mod problem;
mod routes_actions;
mod routes_land;
mod routes_races;
mod routes_read;
mod server;
mod sse;
mod state;
mod task_feed;
pub mod tokens;

pub use server::{WebOptions, WebServer, start};
