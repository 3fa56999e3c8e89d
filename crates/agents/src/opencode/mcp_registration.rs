//! OpenCode as a supervisor: `ganger mcp` as a local server (`mcp.ganger`) in the project's
//! `opencode.json`, the supervise loop in `AGENTS.md`.

use crate::mcp_registration::{FileEdit, McpRegistration, REGISTERS, json_file, section};
use serde_json::json;

pub(crate) struct Registration;

impl McpRegistration for Registration {
    fn edits(&self, command: &str, instructions: &str) -> Vec<FileEdit> {
        let command = command.to_owned();
        let server = json_file("opencode.json", REGISTERS, move |doc| {
            // OpenCode adds its schema to a project config without one: written here, the
            // file stays as committed.
            if doc.get("$schema").is_none() {
                doc["$schema"] = json!("https://opencode.ai/config.json");
            }
            doc["mcp"]["ganger"] = json!({
                "type": "local",
                "command": [command, "mcp"],
                "enabled": true,
            });
        });
        vec![server, section("AGENTS.md", instructions)]
    }
}
