//! The command's integration tests, one module per subject, in one test binary: one link
//! and one set of the helpers instead of one per file (the conformance and sandbox suites keep
//! binaries of their own: `ganger agents canary` builds and runs the conformance one).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod fleet_world;
mod mcp_client;
mod pipeline_common;
mod scratch_fs;
mod web_world;

mod agent_output;
mod agents_list;
mod big_diffs;
mod careless_input;
mod checks;
mod clean;
mod cli_input;
mod concurrent_starts;
mod conflict_prediction;
mod conflict_serialize;
mod demo;
mod e2e_mcp_commander;
mod e2e_opencode;
mod environment_failures;
mod evidence;
mod fleet;
mod fleet_chaos;
mod fleet_queue;
mod gateway_agents;
mod image_build;
mod land;
mod land_fix_detached;
mod land_opencode;
mod land_rebase;
mod land_serve;
mod land_world;
mod lost_session;
mod mcp_commanders;
mod mcp_land;
mod mcp_protocol;
mod mcp_tools;
mod merge_fake_agent;
mod merge_rewind;
mod metrics;
mod nested_repository;
mod output_snapshots;
mod ownership;
mod pipeline_agents;
mod pipeline_commander;
mod pipeline_full;
mod pipeline_input;
mod postgres_store;
mod postgres_tls;
mod race_agents;
mod race_cancel;
mod race_clean;
mod race_conflicts;
mod race_detach;
mod race_fleet;
mod race_graft;
mod race_input;
mod race_limits;
mod race_queue;
mod reference;
mod remote_fleet;
mod rounds_fake_agent;
mod sandbox_input;
mod snapshot_watch;
mod start_clean_safety;
mod stream_packing;
mod takeover;
mod tree_cache;
mod tree_checkout;
mod tree_ends;
mod tree_overlay;
mod tree_pool;
mod tree_remote;
mod tree_runs;
mod tree_share;
mod warm_claude;
mod warm_gemini;
mod warm_opencode;
mod web_api;
mod web_browser;
mod web_contract;
mod web_events;
mod web_land;
mod web_land_page;
mod web_limits;
mod web_mcp;
mod web_race_page;
mod web_races;
mod web_workers_page;
mod worker_image;
mod workers;
