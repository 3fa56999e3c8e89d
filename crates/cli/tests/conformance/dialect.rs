//! How each agent's model calls its tools: the same scenario needs `write` with `filePath`
//! for OpenCode, `Write` with an absolute `file_path` for Claude Code, an `apply_patch`
//! custom call for Codex, `write_file` for Gemini CLI and Qwen Code. Also which requests an
//! agent counts in its token figures, and whether it reports a cost of its own.

use ganger_fake_llm::Turn;
use serde_json::json;
use std::path::Path;

/// One agent's dialect.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// The adapter's name.
    pub agent: &'static str,
    /// Whether the agent reports its own cost (else the price table in ganger.toml is used).
    pub own_cost: bool,
    /// Whether its token figures include requests that offer no tools (side requests).
    pub counts_side_requests: bool,
    /// How long its own retries of a failing model may take, in silence (Qwen Code: seven
    /// attempts, about 100 s, that no setting lowers; Gemini CLI: three attempts with
    /// backoff); the failure scenarios give the round a stall limit above it, so that the
    /// agent's own failure is what ends the round.
    pub silent_retries: Option<std::time::Duration>,
    /// Whether the rounds go to the agent kept warm (`[warm] default = true`).
    pub warm: bool,
}

/// The dialects, by agent name.
pub fn dialect(agent: &'static str) -> Dialect {
    let (own_cost, counts_side_requests) = match agent {
        "opencode" => (true, false),
        "claude" => (true, false),
        _ => (false, false),
    };
    let silent_retries = match agent {
        // Seven attempts that no setting lowers, about 100 s.
        "qwen" => Some(std::time::Duration::from_secs(150)),
        // Three attempts (ganger's `general.maxAttempts`) with backoff: 10 to 25 s.
        "gemini" => Some(std::time::Duration::from_secs(60)),
        _ => None,
    };
    Dialect {
        agent,
        own_cost,
        counts_side_requests,
        silent_retries,
        warm: false,
    }
}

/// The dialect of `agent` kept warm.
pub fn warm(agent: &'static str) -> Dialect {
    Dialect {
        warm: true,
        ..dialect(agent)
    }
}

impl Dialect {
    /// A call that writes `content` to `name` in the worktree `worktree`.
    pub fn write(&self, worktree: &Path, name: &str, content: &str) -> Turn {
        let absolute = worktree.join(name).to_string_lossy().into_owned();
        match self.agent {
            "opencode" => Turn::tool("write", json!({"filePath": name, "content": content})),
            "claude" => Turn::tool("Write", json!({"file_path": absolute, "content": content})),
            "codex" => {
                let lines: String = content.lines().map(|l| format!("+{l}\n")).collect();
                Turn::tool(
                    "apply_patch",
                    json!(format!(
                        "*** Begin Patch\n*** Add File: {name}\n{lines}*** End Patch\n"
                    )),
                )
            }
            "gemini" | "qwen" => Turn::tool(
                "write_file",
                json!({"file_path": absolute, "content": content}),
            ),
            other => panic!("no dialect for {other}"),
        }
    }

    /// A write the agent's own permissions refuse in a round that may write, and any
    /// `ganger.toml` it needs: a write to `outside` where the agent guards its workspace
    /// (OpenCode's `external_directory`, Claude's working directories, Gemini's workspace,
    /// Codex's writable roots, ganger's own policy for an agent kept warm); Qwen's yolo mode
    /// writes anywhere, so there, cold, a deny rule of the user's refuses its file tool in the
    /// worktree.
    pub fn refused_write(&self, outside: &Path, worktree: &Path) -> (Turn, &'static str) {
        let path = outside.to_string_lossy().into_owned();
        let content = "refused\n";
        match self.agent {
            "opencode" => (
                Turn::tool("write", json!({"filePath": path, "content": content})),
                "",
            ),
            "claude" => (
                Turn::tool("Write", json!({"file_path": path, "content": content})),
                "",
            ),
            // Kept warm, Qwen asks ganger, whose policy refuses a write outside the worktree.
            "gemini" | "qwen" if self.agent == "gemini" || self.warm => (
                Turn::tool("write_file", json!({"file_path": path, "content": content})),
                "",
            ),
            "codex" => (
                Turn::tool(
                    "apply_patch",
                    json!(format!(
                        "*** Begin Patch\n*** Add File: {path}\n+refused\n*** End Patch\n"
                    )),
                ),
                "",
            ),
            "qwen" => (
                self.write(worktree, "refused.txt", content),
                "[agents.qwen.config.permissions]\ndeny = [\"Write\"]\n",
            ),
            other => panic!("no dialect for {other}"),
        }
    }

    /// Where [`Dialect::refused_write`] writes outside the worktree, in a test world whose
    /// main checkout is `main`: the main checkout, except for Codex, whose sandbox lets all
    /// of `/tmp` (where test worlds live) be written; for it a path outside the project and
    /// `/tmp`, named after the world.
    pub fn outside(&self, main: &Path) -> std::path::PathBuf {
        match self.agent {
            "codex" => {
                let world = main
                    .parent()
                    .and_then(Path::file_name)
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default();
                std::path::PathBuf::from(format!("/usr/local/{world}-refused.txt"))
            }
            _ => main.join("refused.txt"),
        }
    }

    /// A call that runs `command` in the shell.
    pub fn shell(&self, command: &str) -> Turn {
        match self.agent {
            "opencode" => Turn::tool(
                "bash",
                json!({"command": command, "description": "run a command"}),
            ),
            "claude" => Turn::tool("Bash", json!({"command": command})),
            "codex" => Turn::tool("exec_command", json!({"cmd": command})),
            "gemini" | "qwen" => Turn::tool(
                "run_shell_command",
                json!({"command": command, "description": "run a command"}),
            ),
            other => panic!("no dialect for {other}"),
        }
    }
}
