//! `ganger init --supervisor AGENT`: registers `ganger mcp` in the supervising agent's own
//! project-scope configuration (its file, its format) and writes the supervise loop where that
//! agent reads instructions, between markers so that running it again replaces the section
//! rather than adding one. Files are merged, never overwritten: other servers and settings
//! stay. Each file is reported as created, updated or unchanged.
//!
//! | agent | MCP configuration | instructions |
//! |---|---|---|
//! | claude | `.mcp.json`, and `.claude/settings.json` (enables the server, allows its tools) | `CLAUDE.md` |
//! | opencode | `opencode.json` (`mcp.ganger`, a local server) | `AGENTS.md` |
//! | codex | `.codex/config.toml` (`[mcp_servers.ganger]`, its tools approved; read in a trusted project) | `AGENTS.md` |
//! | gemini | `.gemini/settings.json` (`mcpServers.ganger`, its tools trusted) | `GEMINI.md` |

use crate::mcp_args::Supervisor;
use ganger_engine::EngineError;
use ganger_engine::documents::FileChange;
use serde_json::{Value, json};
use std::path::Path;

/// The section's markers in an instructions file.
const BEGIN: &str = "<!-- ganger: the supervise loop (ganger init --supervisor) -->";
const END: &str = "<!-- ganger: end -->";
/// How long a tool call may take where the agent limits it (a `wait` blocks for minutes).
const TOOL_TIMEOUT_SECS: u64 = 3600;

/// Writes `supervisor`'s registration of `command mcp` and its instructions under `root`.
pub(crate) fn install(
    root: &Path,
    supervisor: Supervisor,
    command: &str,
) -> Result<Vec<FileChange>, EngineError> {
    let mut changes = Vec::new();
    let loop_text = ganger_mcp::SUPERVISE_LOOP;
    match supervisor {
        Supervisor::Claude => {
            changes.push(merge_json(
                &root.join(".mcp.json"),
                "registers the MCP server ganger",
                |doc| {
                    // `alwaysLoad`: its tools from the first request on, not after a
                    // background connect (docs/agents/mcp-supervisors-measured.md).
                    doc["mcpServers"]["ganger"] = json!({
                        "type": "stdio",
                        "command": command,
                        "args": ["mcp"],
                        "alwaysLoad": true,
                    });
                },
            )?);
            changes.push(merge_json(
                &root.join(".claude/settings.json"),
                "enables the project's server ganger and allows its tools",
                |doc| {
                    add_to_list(doc, &["enabledMcpjsonServers"], "ganger");
                    add_to_list(doc, &["permissions", "allow"], "mcp__ganger");
                },
            )?);
            changes.push(section(&root.join("CLAUDE.md"), loop_text)?);
        }
        Supervisor::Opencode => {
            changes.push(merge_json(
                &root.join("opencode.json"),
                "registers the MCP server ganger",
                |doc| {
                    // OpenCode adds its schema to a project config without one: written here,
                    // the file stays as committed.
                    if doc.get("$schema").is_none() {
                        doc["$schema"] = json!("https://opencode.ai/config.json");
                    }
                    doc["mcp"]["ganger"] = json!({
                        "type": "local",
                        "command": [command, "mcp"],
                        "enabled": true,
                    });
                },
            )?);
            changes.push(section(&root.join("AGENTS.md"), loop_text)?);
        }
        Supervisor::Codex => {
            changes.push(merge_toml(&root.join(".codex/config.toml"), command)?);
            changes.push(section(&root.join("AGENTS.md"), loop_text)?);
        }
        Supervisor::Gemini => {
            changes.push(merge_json(
                &root.join(".gemini/settings.json"),
                "registers the MCP server ganger",
                |doc| {
                    doc["mcpServers"]["ganger"] = json!({
                        "command": command,
                        "args": ["mcp"],
                        "timeout": TOOL_TIMEOUT_SECS * 1000,
                        "trust": true,
                    });
                },
            )?);
            changes.push(section(&root.join("GEMINI.md"), loop_text)?);
        }
    }
    Ok(changes)
}

/// Appends `item` to the list at `path` in `doc` unless it is there.
fn add_to_list(doc: &mut Value, path: &[&str], item: &str) {
    let mut at = &mut *doc;
    for key in path {
        if !at.get(*key).is_some_and(|v| v.is_object() || v.is_array()) {
            at[*key] = json!({});
        }
        at = &mut at[*key];
    }
    if !at.is_array() {
        *at = json!([]);
    }
    if let Some(list) = at.as_array_mut()
        && !list.iter().any(|v| v == item)
    {
        list.push(json!(item));
    }
}

fn read(path: &Path) -> Result<Option<String>, EngineError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EngineError::environment(
            format!("failed to read {}", path.display()),
            e,
        )),
    }
}

fn write(
    path: &Path,
    before: Option<&str>,
    after: &str,
    what: &'static str,
) -> Result<FileChange, EngineError> {
    let change = match before {
        Some(text) if text == after => "unchanged",
        Some(_) => "updated",
        None => "created",
    };
    if change != "unchanged" {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                EngineError::environment(format!("failed to create {}", dir.display()), e)
            })?;
        }
        std::fs::write(path, after).map_err(|e| {
            EngineError::environment(format!("failed to write {}", path.display()), e)
        })?;
    }
    Ok(FileChange {
        path: path.to_path_buf(),
        change,
        what,
    })
}

/// Edits the JSON file at `path` (an empty object when there is none).
fn merge_json(
    path: &Path,
    what: &'static str,
    edit: impl FnOnce(&mut Value),
) -> Result<FileChange, EngineError> {
    let before = read(path)?;
    let mut doc: Value = match &before {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text).map_err(|e| {
            EngineError::invalid(format!(
                "{} is not plain JSON ({e}); nothing was changed",
                path.display()
            ))
            .hint("add the ganger server by hand, or remove the comments from the file")
        })?,
        _ => json!({}),
    };
    if !doc.is_object() {
        return Err(EngineError::invalid(format!(
            "{} does not hold a JSON object; nothing was changed",
            path.display()
        )));
    }
    edit(&mut doc);
    let after = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    write(path, before.as_deref(), &after, what)
}

/// Codex's `[mcp_servers.ganger]`: appended as text when missing (the file's comments stay),
/// rewritten when it differs.
fn merge_toml(path: &Path, command: &str) -> Result<FileChange, EngineError> {
    let what = "registers the MCP server ganger";
    let before = read(path)?;
    let text = before.clone().unwrap_or_default();
    let mut doc: toml::Table = text.parse().map_err(|e| {
        EngineError::invalid(format!(
            "{} is not TOML ({e}); nothing was changed",
            path.display()
        ))
    })?;
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
    write(path, before.as_deref(), &after, what)
}

/// The loop between the markers in the instructions file at `path`: replaced where the
/// markers are, appended where they are not.
fn section(path: &Path, loop_text: &str) -> Result<FileChange, EngineError> {
    let before = read(path)?;
    let text = before.clone().unwrap_or_default();
    let block = format!("{BEGIN}\n## Supervising with ganger\n\n{loop_text}{END}\n");
    let after = match (text.find(BEGIN), text.find(END)) {
        (Some(start), Some(end)) if end > start => {
            let end = end + END.len();
            let end = if text[end..].starts_with('\n') {
                end + 1
            } else {
                end
            };
            format!("{}{block}{}", &text[..start], &text[end..])
        }
        _ if text.is_empty() => block,
        _ if text.ends_with("\n\n") => format!("{text}{block}"),
        _ if text.ends_with('\n') => format!("{text}\n{block}"),
        _ => format!("{text}\n\n{block}"),
    };
    write(
        path,
        before.as_deref(),
        &after,
        "teaches the supervise loop",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(root: &Path, supervisor: Supervisor) -> Vec<(String, &'static str)> {
        install(root, supervisor, "ganger")
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let path = c.path.strip_prefix(root).unwrap_or(&c.path);
                (path.display().to_string(), c.change)
            })
            .collect()
    }

    #[test]
    fn every_supervisor_is_written_once_and_then_left_unchanged() {
        for supervisor in [
            Supervisor::Claude,
            Supervisor::Opencode,
            Supervisor::Codex,
            Supervisor::Gemini,
        ] {
            let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let first = changes(root.path(), supervisor);
            assert!(!first.is_empty(), "{supervisor:?}");
            assert!(first.iter().all(|(_, c)| *c == "created"), "{first:?}");
            let again = changes(root.path(), supervisor);
            assert!(again.iter().all(|(_, c)| *c == "unchanged"), "{again:?}");
        }
    }

    #[test]
    fn other_settings_stay_and_the_section_is_replaced_in_place() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = root.path();
        let write = |p: &str, t: &str| {
            let _ = std::fs::create_dir_all(dir.join(p).parent().unwrap_or(dir));
            let _ = std::fs::write(dir.join(p), t);
        };
        write(
            ".mcp.json",
            r#"{"mcpServers": {"other": {"command": "x"}}}"#,
        );
        write(
            "CLAUDE.md",
            &format!("# Project\n\n{BEGIN}\nold loop\n{END}\n\nmore\n"),
        );
        write(".codex/config.toml", "# mine\nmodel = \"m\"\n");
        let _ = changes(dir, Supervisor::Claude);
        let _ = changes(dir, Supervisor::Codex);
        let mcp: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(".mcp.json")).unwrap_or_default(),
        )
        .unwrap_or_default();
        assert_eq!(mcp["mcpServers"]["other"], json!({"command": "x"}));
        assert_eq!(mcp["mcpServers"]["ganger"]["args"], json!(["mcp"]));
        let claude = std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap_or_default();
        assert!(claude.starts_with("# Project\n\n<!-- ganger"), "{claude}");
        assert!(claude.ends_with(&format!("{END}\n\nmore\n")), "{claude}");
        assert!(!claude.contains("old loop"), "{claude}");
        let codex = std::fs::read_to_string(dir.join(".codex/config.toml")).unwrap_or_default();
        assert!(
            codex.starts_with("# mine\nmodel = \"m\"\n\n[mcp_servers.ganger]\n"),
            "{codex}"
        );
    }

    #[test]
    fn a_file_that_is_not_json_is_left_alone() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::write(root.path().join("opencode.json"), "{ // mine\n}");
        let error = install(root.path(), Supervisor::Opencode, "ganger").err();
        assert!(error.is_some_and(|e| e.message.contains("is not plain JSON")));
        assert_eq!(
            std::fs::read_to_string(root.path().join("opencode.json")).unwrap_or_default(),
            "{ // mine\n}"
        );
    }
}
