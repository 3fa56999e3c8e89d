//! Codex as a supervisor: `[mcp_servers.ganger]` in the project's `.codex/config.toml` (its
//! tools approved; Codex reads it in a trusted project), the supervise loop in `AGENTS.md`.

use crate::mcp_registration::{
    FileEdit, McpRegistration, REGISTERS, RegistrationError, TOOL_TIMEOUT_SECS, section,
};
use std::path::Path;

pub(crate) struct Registration;

impl McpRegistration for Registration {
    fn edits(&self, command: &str, instructions: &str) -> Vec<FileEdit> {
        let command = command.to_owned();
        let server = FileEdit {
            path: ".codex/config.toml",
            what: REGISTERS,
            edit: Box::new(move |path, before| merge_toml(path, before, &command)),
        };
        vec![server, section("AGENTS.md", instructions)]
    }
}

/// `[mcp_servers.ganger]`: appended as text when missing (the file's comments stay),
/// rewritten when it differs.
fn merge_toml(
    path: &Path,
    before: Option<&str>,
    command: &str,
) -> Result<String, RegistrationError> {
    let text = before.unwrap_or_default().to_owned();
    let mut doc: toml::Table = text.parse().map_err(|e| RegistrationError::Invalid {
        message: format!("{} is not TOML ({e}); nothing was changed", path.display()),
        hint: None,
    })?;
    let server = server(command);
    let servers = doc.get("mcp_servers").and_then(toml::Value::as_table);
    let after = match servers.and_then(|s| s.get("ganger")) {
        Some(existing) if existing.as_table() == Some(&server) => text,
        Some(_) => {
            if let Some(toml::Value::Table(servers)) = doc.get_mut("mcp_servers") {
                servers.insert("ganger".into(), toml::Value::Table(server));
            }
            toml::to_string(&doc).unwrap_or_default()
        }
        None => {
            let mut table = toml::Table::new();
            let mut servers = toml::Table::new();
            servers.insert("ganger".into(), toml::Value::Table(server));
            table.insert("mcp_servers".into(), toml::Value::Table(servers));
            let block = toml::to_string(&table).unwrap_or_default();
            let sep = if text.is_empty() || text.ends_with("\n\n") {
                ""
            } else if text.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            format!("{text}{sep}{block}")
        }
    };
    Ok(after)
}

/// The server's table.
fn server(command: &str) -> toml::Table {
    let mut server = toml::Table::new();
    server.insert("command".into(), command.into());
    server.insert("args".into(), toml::Value::Array(vec!["mcp".into()]));
    server.insert(
        "tool_timeout_sec".into(),
        toml::Value::Integer(TOOL_TIMEOUT_SECS as i64),
    );
    // Codex asks before a tool that is not read-only, and `exec` cannot ask: allowed, as the
    // other supervisors' allow rules do.
    server.insert("default_tools_approval_mode".into(), "approve".into());
    server
}
