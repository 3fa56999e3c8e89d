//! Gemini CLI as a supervisor: `ganger mcp` in the project's `.gemini/settings.json`
//! (`mcpServers.ganger`, its tools trusted), the supervise loop in `GEMINI.md`.

use crate::mcp_registration::{
    FileEdit, McpRegistration, REGISTERS, TOOL_TIMEOUT_SECS, json_file, section,
};
use serde_json::json;

pub(crate) struct Registration;

impl McpRegistration for Registration {
    fn edits(&self, command: &str, instructions: &str) -> Vec<FileEdit> {
        let command = command.to_owned();
        let server = json_file(".gemini/settings.json", REGISTERS, move |doc| {
            doc["mcpServers"]["ganger"] = json!({
                "command": command,
                "args": ["mcp"],
                "timeout": TOOL_TIMEOUT_SECS * 1000,
                "trust": true,
            });
        });
        vec![server, section("GEMINI.md", instructions)]
    }
}
