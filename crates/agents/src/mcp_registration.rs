//! How an agent CLI is told to run ganger's MCP server when it supervises (`ganger init
//! --supervisor AGENT`): each agent that can supervise says how `ganger mcp` is registered in
//! its own project-scope configuration (its file, its format: `NAME/mcp_registration.rs`,
//! reached through [`crate::Adapter::mcp_registration`]) and where it reads the supervise loop,
//! written between markers so that running it again replaces the section rather than adding
//! one. An agent's registration is pure (each file's new text from its text now); [`install`]
//! reads and writes the files. Files are merged, never overwritten: other servers and settings
//! stay. Each file is reported as created, updated or unchanged.
//!
//! | agent | MCP configuration | instructions |
//! |---|---|---|
//! | claude | `.mcp.json`, and `.claude/settings.json` (enables the server, allows its tools) | `CLAUDE.md` |
//! | opencode | `opencode.json` (`mcp.ganger`, a local server) | `AGENTS.md` |
//! | codex | `.codex/config.toml` (`[mcp_servers.ganger]`, its tools approved; read in a trusted project) | `AGENTS.md` |
//! | gemini | `.gemini/settings.json` (`mcpServers.ganger`, its tools trusted) | `GEMINI.md` |

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The section's markers in an instructions file.
pub(crate) const BEGIN: &str = "<!-- ganger: the supervise loop (ganger init --supervisor) -->";
pub(crate) const END: &str = "<!-- ganger: end -->";
/// How long a tool call may take where the agent limits it (a `wait` blocks for minutes).
pub(crate) const TOOL_TIMEOUT_SECS: u64 = 3600;
/// What a file that registers the server is said to do.
pub(crate) const REGISTERS: &str = "registers the MCP server ganger";

/// An agent's way of registering `COMMAND mcp` and of being taught the supervise loop.
pub trait McpRegistration: Sync {
    /// The files to edit for `command mcp` and the `instructions` (the supervise loop), in
    /// the order they are written.
    fn edits(&self, command: &str, instructions: &str) -> Vec<FileEdit>;
}

/// A file's new text from its path and its text now (`None`: there is none).
pub type Edit = Box<dyn FnOnce(&Path, Option<&str>) -> Result<String, RegistrationError>>;

/// One file of a registration.
pub struct FileEdit {
    /// Where, from the repository's root.
    pub path: &'static str,
    /// What the file does for the supervisor, as reported.
    pub what: &'static str,
    pub edit: Edit,
}

/// Writes `registration`'s files for `command mcp` and `instructions` under the repository
/// `root`, stopping at the first that cannot be.
pub fn install(
    registration: &dyn McpRegistration,
    root: &Path,
    command: &str,
    instructions: &str,
) -> Result<Vec<FileChange>, RegistrationError> {
    let mut changes = Vec::new();
    for file in registration.edits(command, instructions) {
        let path = root.join(file.path);
        let before = read(&path)?;
        let after = (file.edit)(&path, before.as_deref())?;
        changes.push(write(&path, before.as_deref(), &after, file.what)?);
    }
    Ok(changes)
}

/// The agents that can supervise, by name, in the registry's order.
pub fn supervisors() -> Vec<&'static str> {
    crate::adapters()
        .iter()
        .filter(|a| a.mcp_registration().is_some())
        .map(|a| a.name())
        .collect()
}

/// What became of one file.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    /// `created`, `updated` or `unchanged`.
    pub change: &'static str,
    pub what: &'static str,
}

/// Why a registration was not written.
#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    /// A file is there in a form ganger does not edit; nothing was changed.
    #[error("{message}")]
    Invalid {
        message: String,
        hint: Option<&'static str>,
    },
    /// Reading or writing a file failed.
    #[error("{message}")]
    Environment {
        message: String,
        #[source]
        cause: std::io::Error,
    },
}

/// Appends `item` to the list at `path` in `doc` unless it is there.
pub(crate) fn add_to_list(doc: &mut Value, path: &[&str], item: &str) {
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

fn read(path: &Path) -> Result<Option<String>, RegistrationError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(cause) => Err(RegistrationError::Environment {
            message: format!("failed to read {}", path.display()),
            cause,
        }),
    }
}

fn write(
    path: &Path,
    before: Option<&str>,
    after: &str,
    what: &'static str,
) -> Result<FileChange, RegistrationError> {
    let change = match before {
        Some(text) if text == after => "unchanged",
        Some(_) => "updated",
        None => "created",
    };
    if change != "unchanged" {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|cause| RegistrationError::Environment {
                message: format!("failed to create {}", dir.display()),
                cause,
            })?;
        }
        std::fs::write(path, after).map_err(|cause| RegistrationError::Environment {
            message: format!("failed to write {}", path.display()),
            cause,
        })?;
    }
    Ok(FileChange {
        path: path.to_path_buf(),
        change,
        what,
    })
}

/// A JSON file's edit (an empty object when there is none).
pub(crate) fn json_file(
    path: &'static str,
    what: &'static str,
    edit: impl FnOnce(&mut Value) + 'static,
) -> FileEdit {
    let edit = move |path: &Path, before: Option<&str>| {
        let mut doc: Value = match before {
            Some(text) if !text.trim().is_empty() => {
                serde_json::from_str(text).map_err(|e| RegistrationError::Invalid {
                    message: format!(
                        "{} is not plain JSON ({e}); nothing was changed",
                        path.display()
                    ),
                    hint: Some(
                        "add the ganger server by hand, or remove the comments from the file",
                    ),
                })?
            }
            _ => json!({}),
        };
        if !doc.is_object() {
            return Err(RegistrationError::Invalid {
                message: format!(
                    "{} does not hold a JSON object; nothing was changed",
                    path.display()
                ),
                hint: None,
            });
        }
        edit(&mut doc);
        Ok(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n")
    };
    FileEdit {
        path,
        what,
        edit: Box::new(edit),
    }
}

/// The instructions file at `path` with the loop between the markers: replaced where the
/// markers are, appended where they are not.
pub(crate) fn section(path: &'static str, loop_text: &str) -> FileEdit {
    let block = format!("{BEGIN}\n## Supervising with ganger\n\n{loop_text}{END}\n");
    let edit = move |_: &Path, before: Option<&str>| {
        let text = before.unwrap_or_default();
        Ok(match (text.find(BEGIN), text.find(END)) {
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
        })
    };
    FileEdit {
        path,
        what: "teaches the supervise loop",
        edit: Box::new(edit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(root: &Path, agent: &str) -> Result<Vec<FileChange>, RegistrationError> {
        let registration = crate::adapter(agent)
            .and_then(|a| a.mcp_registration())
            .unwrap_or_else(|| panic!("{agent} cannot supervise"));
        super::install(registration, root, "ganger", "the loop\n")
    }

    fn changes(root: &Path, agent: &str) -> Vec<(String, &'static str)> {
        install(root, agent)
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let path = c.path.strip_prefix(root).unwrap_or(&c.path);
                (path.display().to_string(), c.change)
            })
            .collect()
    }

    #[test]
    fn the_supervisors_are_the_agents_with_a_registration() {
        assert_eq!(supervisors(), ["opencode", "claude", "codex", "gemini"]);
    }

    #[test]
    fn every_supervisor_is_written_once_and_then_left_unchanged() {
        for supervisor in supervisors() {
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
        let _ = changes(dir, "claude");
        let _ = changes(dir, "codex");
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
        let error = install(root.path(), "opencode").err();
        assert!(error.is_some_and(|e| e.to_string().contains("is not plain JSON")));
        assert_eq!(
            std::fs::read_to_string(root.path().join("opencode.json")).unwrap_or_default(),
            "{ // mine\n}"
        );
    }
}
