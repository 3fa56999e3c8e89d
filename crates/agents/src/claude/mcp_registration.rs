//! Claude Code as a supervisor: `ganger mcp` in the project's `.mcp.json`, enabled and its
//! tools allowed in `.claude/settings.json`, the supervise loop in `CLAUDE.md`.

use crate::mcp_registration::{
    FileEdit, McpRegistration, REGISTERS, add_to_list, json_file, section,
};
use serde_json::json;

pub(crate) struct Registration;

impl McpRegistration for Registration {
    fn edits(&self, command: &str, instructions: &str) -> Vec<FileEdit> {
        let command = command.to_owned();
        let server = json_file(".mcp.json", REGISTERS, move |doc| {
            // `alwaysLoad`: its tools from the first request on, not after a background
            // connect (docs/agents/mcp-supervisors-measured.md).
            doc["mcpServers"]["ganger"] = json!({
                "type": "stdio",
                "command": command,
                "args": ["mcp"],
                "alwaysLoad": true,
            });
        });
        let settings = json_file(
            ".claude/settings.json",
            "enables the project's server ganger and allows its tools",
            |doc| {
                add_to_list(doc, &["enabledMcpjsonServers"], "ganger");
                add_to_list(doc, &["permissions", "allow"], "mcp__ganger");
            },
        );
        vec![server, settings, section("CLAUDE.md", instructions)]
    }
}
