//! `ganger mcp`: the MCP server on stdio, acting as `--as NAME`, else `GANGER_COMMANDER`, else
//! the connecting client's name. It runs until the client closes stdin (or stops it with
//! SIGINT); rounds it started run on in their detached hosts.

use crate::mcp_args::McpArgs;
use crate::{Failure, Outcome, Place, exit};
use ganger_engine::{EngineError, Workspace};
use std::time::Duration;

pub(crate) fn run(place: &Place, args: McpArgs) -> Outcome {
    let here = crate::here(place.dir)?;
    let store = place.named_store()?;
    // A directory that is not a repository is an error now, not at the first tool call.
    Workspace::discover(&here, store.clone())?;
    let named = args
        .as_name
        .or_else(|| std::env::var("GANGER_COMMANDER").ok())
        .filter(|name| !name.trim().is_empty());
    if let Some(name) = &named {
        ganger_engine::check_commander_name(name).map_err(EngineError::invalid)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| EngineError::environment("failed to start the MCP server's runtime", e))?;
    let server = ganger_mcp::GangerMcp::new(here, store, named);
    let served = runtime.block_on(ganger_mcp::serve_stdio(server));
    // A call still blocked (a long `wait`) must not keep the process after the client left.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served.map_err(|why| Failure::Engine(EngineError::invalid(why)))?;
    Ok(exit::OK)
}
