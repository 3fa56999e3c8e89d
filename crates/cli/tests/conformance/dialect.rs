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

    /// A call the agent's own permissions refuse, and the `--permission` of the round: a write
    /// to the main checkout (outside the task's worktree) where the agent guards its
    /// workspace (OpenCode's `external_directory`, Claude's working directories, Gemini's
    /// workspace); where it does not, a write in a read-only round (Codex's sandbox lets the
    /// test world's `/tmp` be written; Qwen's yolo mode writes anywhere).
    pub fn refused_write(&self, main: &Path, worktree: &Path) -> (Turn, &'static str) {
        let outside = main.join("refused.txt").to_string_lossy().into_owned();
        let content = "refused\n";
        match self.agent {
            "opencode" => (
                Turn::tool("write", json!({"filePath": outside, "content": content})),
                "write",
            ),
            "claude" => (
                Turn::tool("Write", json!({"file_path": outside, "content": content})),
                "write",
            ),
            "gemini" => (
                Turn::tool(
                    "write_file",
                    json!({"file_path": outside, "content": content}),
                ),
                "write",
            ),
            "codex" | "qwen" => (self.write(worktree, "refused.txt", content), "read-only"),
            other => panic!("no dialect for {other}"),
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
