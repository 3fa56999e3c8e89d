//! The `command` agent: any other CLI, configured in `ganger.toml` by an argument template
//! (`argv`, `resume_argv`), how the prompt is passed (`argv` or `stdin`), and which stream
//! format it prints: plain `text` (the last line is the answer) or the format of one of the
//! known agents, whose parser and success test it then borrows.

mod adapter;
mod template;
mod text;

pub use adapter::{CommandAgent, FACTS};
pub use template::{Settings, fill_argv};
pub use text::TextStream;

/// The agent's name in `--agent` and `ganger.toml`.
pub const NAME: &str = "command";

/// The stream formats a `command` agent may speak.
pub const FORMATS: [&str; 6] = ["text", "opencode", "claude", "codex", "gemini", "qwen"];

static TEXT: CommandAgent = CommandAgent { format: "text" };
static OPENCODE: CommandAgent = CommandAgent { format: "opencode" };
static CLAUDE: CommandAgent = CommandAgent { format: "claude" };
static CODEX: CommandAgent = CommandAgent { format: "codex" };
static GEMINI: CommandAgent = CommandAgent { format: "gemini" };
static QWEN: CommandAgent = CommandAgent { format: "qwen" };

/// The `command` adapter that reads `format`, or `None` for an unknown format (or the format
/// of an agent this build has no adapter for).
pub fn adapter(format: &str) -> Option<&'static dyn crate::Adapter> {
    let agent: &'static CommandAgent = match format {
        "text" => &TEXT,
        "opencode" => &OPENCODE,
        "claude" => &CLAUDE,
        "codex" => &CODEX,
        "gemini" => &GEMINI,
        "qwen" => &QWEN,
        _ => return None,
    };
    if format != "text" && crate::adapter(format).is_none() {
        return None;
    }
    Some(agent)
}
