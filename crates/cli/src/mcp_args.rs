//! The arguments of `ganger mcp` and of `ganger init` (whose `--supervisor` registers the MCP
//! server with a supervising agent), apart from the other commands' definitions.

use clap::Args;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The commander every tool call acts as (else GANGER_COMMANDER, else the connecting
    /// client's name, e.g. claude-code).
    #[arg(long = "as", value_name = "NAME")]
    pub as_name: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Also register `ganger mcp` with this supervising agent (its project-scope MCP
    /// configuration) and write its instructions (the supervise loop).
    #[arg(long, value_name = "AGENT", value_parser = supervisors())]
    pub supervisor: Option<String>,
    #[arg(from_global)]
    pub json: bool,
}

/// The agents that can supervise through ganger's MCP server (their adapters say how to
/// register it).
fn supervisors() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(ganger_agents::mcp_registration::supervisors())
}
