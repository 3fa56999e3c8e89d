//! The shapes of what some agents can do and others cannot, which the engine asks the adapter
//! for rather than testing an agent's name: a program named in the agent's settings, an
//! interactive interface on a session, and a way to take a session back to an earlier point.
//! Where a capability needs a process (OpenCode's `export` and `import`), the adapter gives
//! the arguments and reads what came back; the engine runs it, as for
//! [`crate::SessionFinder`].

use crate::CommandPlan;

/// A program an agent's settings name in place of the agent's own (the `command` agent's
/// templates start with theirs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedProgram {
    /// As written: a path, or a name looked up on `PATH`.
    pub program: String,
    /// Where it is written, as an error names it (`agents.command.argv in ganger.toml`).
    pub named_in: &'static str,
}

/// The agent's own interactive interface on a session, for `ganger attach`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interactive {
    /// The program, when it is not the one the agent's rounds run.
    pub program: Option<NamedProgram>,
    /// Its arguments, environment and files; stdin is the person's.
    pub plan: CommandPlan,
}

/// How the agent's conversation goes back to the end of an earlier round (`ganger rewind`)
/// while the old session stays as it was. An agent without one starts a new session whose
/// first prompt summarizes the rounds kept.
#[derive(Debug, Clone, Copy)]
pub enum SessionFork {
    /// The agent forks the session itself while it runs the next prompt, at a point of its
    /// own ([`crate::RoundRequest::resume_at`]); `point` finds that point, the end of a
    /// round, in the round's stream.
    AtNextRound {
        /// The point at the end of the round whose stream is `stream`, in `session`.
        point: fn(stream: &str, session: &str) -> Option<String>,
    },
    /// ganger copies the session up to a moment through the CLI (export, cut, import); the
    /// next round resumes the copy. Only where ganger reaches the agent's sessions: not in a
    /// sandbox, which keeps them in its own home.
    Copy(SessionCopy),
}

/// Copying a session up to a moment through the agent's CLI.
#[derive(Debug, Clone, Copy)]
pub struct SessionCopy {
    /// The arguments that print `session` whole.
    pub export_args: fn(session: &str) -> Vec<String>,
    /// Variables set for the export and the import on top of the rounds' environment.
    pub env: &'static [(&'static str, &'static str)],
    /// Cuts an export to what was made up to a moment and renames it.
    pub cut: CutSession,
    /// The arguments that import the copy written to `file`.
    pub import_args: fn(file: &str) -> Vec<String>,
    /// Whether what the import printed says the copy `session` is in; if not, why.
    pub imported: fn(stdout: &str, session: &str) -> Result<(), String>,
}

/// `cut(exported, session, cut_ms, fresh)`: the export of `session` cut to what was made up to
/// `cut_ms` (Unix ms), under new ids; `fresh` gives new random text (a UUID) each time it is
/// called.
pub type CutSession = fn(
    exported: &[u8],
    session: &str,
    cut_ms: i64,
    fresh: &mut dyn FnMut() -> String,
) -> Result<CopiedSession, String>;

/// A session cut and renamed, ready to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedSession {
    /// The copy's session id.
    pub session: String,
    /// The text to import.
    pub data: String,
}
