//! The engine's error: a kind that says what went wrong for the one who asked (and that the
//! CLI maps to its exit code), a one-line message naming the problem, an optional hint saying
//! what to do, and the cause it came from. Bad input is only what the asker can correct: a
//! failure of the environment (the database, the disk, git, Docker, an agent's CLI that cannot
//! be run) or of ganger itself keeps its own kind and its cause, so that nobody is told that
//! their input was wrong, or that nothing was changed, when a disk filled up.

use std::fmt;
use std::sync::Arc;

/// What kind of failure. The first four are refusals: nothing was changed, the command exits
/// 2, and `ganger.error/1` names them all `invalid` on the command line; a front end that
/// answers each with a status of its own (the HTTP API's 400, 404, 409 and 403) tells them
/// apart by their kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Bad arguments, or a state that does not allow the command; nothing was changed.
    Invalid,
    /// What was asked for does not exist (a task, a round, a fleet); nothing was changed.
    NotFound,
    /// What the request would make or take is there already, or another holds it (a task of
    /// that name, a start queued already, a session another task has); nothing was changed.
    Conflict,
    /// The commander may not do this (another owns the task); nothing was changed.
    Forbidden,
    /// The model is not available.
    ModelUnavailable,
    /// A wait ran out of time with the round still running.
    WaitTimeout,
    /// A round ran and failed (its report says why).
    RoundFailed,
    /// The environment failed (the database, the disk, git, Docker, a process that could not
    /// be run) or ganger itself did; the cause says which.
    Environment,
}

impl ErrorKind {
    /// The exit code of a command that ends with this kind of error (README, "Exit codes").
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::RoundFailed => 1,
            ErrorKind::Invalid
            | ErrorKind::NotFound
            | ErrorKind::Conflict
            | ErrorKind::Forbidden => 2,
            ErrorKind::ModelUnavailable => 3,
            ErrorKind::WaitTimeout => 4,
            // sysexits' EX_SOFTWARE: neither the asker's input nor a round's outcome.
            ErrorKind::Environment => 70,
        }
    }

    /// Whether this is a refusal: the asker's to correct, nothing changed (exit 2).
    pub fn is_refusal(self) -> bool {
        self.exit_code() == 2
    }

    /// The name `ganger.error/1` carries on the command line and from the MCP server
    /// (`invalid`, `environment`, ...; every refusal is `invalid`, docs/json.md).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Invalid
            | ErrorKind::NotFound
            | ErrorKind::Conflict
            | ErrorKind::Forbidden => "invalid",
            ErrorKind::ModelUnavailable => "model-unavailable",
            ErrorKind::WaitTimeout => "wait-timeout",
            ErrorKind::RoundFailed => "round-failed",
            ErrorKind::Environment => "environment",
        }
    }
}

/// A cause kept with an error, shared so the error stays cheap to clone.
pub type Cause = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// A failure of a ganger command.
#[derive(Debug, Clone)]
pub struct EngineError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
    /// What the failure came from (a database, I/O, git or Docker error), with its own causes.
    pub cause: Option<Cause>,
    /// A refusal that passes with time (the task has a round running, another command is
    /// starting it, it holds new rounds): a queued item that meets one waits and is sent again
    /// instead of being refused for good.
    pub passes: bool,
}

impl PartialEq for EngineError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message && self.hint == other.hint
    }
}

impl EngineError {
    fn of(kind: ErrorKind, message: impl Into<String>) -> Self {
        EngineError {
            kind,
            message: message.into(),
            hint: None,
            cause: None,
            passes: false,
        }
    }

    /// Bad arguments or state.
    pub fn invalid(message: impl Into<String>) -> Self {
        EngineError::of(ErrorKind::Invalid, message)
    }

    /// Input that names something that does not exist (a task, a round, a fleet).
    pub fn not_found(message: impl Into<String>) -> Self {
        EngineError::of(ErrorKind::NotFound, message)
    }

    /// A request that would make or take what is there already or held by another.
    pub fn conflict(message: impl Into<String>) -> Self {
        EngineError::of(ErrorKind::Conflict, message)
    }

    /// A refusal of something the commander may not do (another owns the task).
    pub fn not_permitted(message: impl Into<String>) -> Self {
        EngineError::of(ErrorKind::Forbidden, message)
    }

    /// A refusal that passes with time (see [`EngineError::passes`]); exit 2 like any other.
    pub fn passing(message: impl Into<String>) -> Self {
        EngineError {
            passes: true,
            ..EngineError::of(ErrorKind::Invalid, message)
        }
    }

    /// The model is not available.
    pub fn model(message: impl Into<String>) -> Self {
        EngineError::of(ErrorKind::ModelUnavailable, message)
    }

    /// The environment failed (or ganger did): `message` says what ganger was doing ("failed
    /// to ..."), `cause` what failed.
    pub fn environment(
        message: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        EngineError::of(ErrorKind::Environment, message).caused_by(cause)
    }

    /// The environment failed, with no error value to keep (the message says it all).
    pub fn environment_message(message: impl Into<String>) -> Self {
        EngineError::of(ErrorKind::Environment, message)
    }

    /// The same error with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The same error with a cause.
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Arc::new(cause));
        self
    }

    /// The same error, with `what` said first ("failed to clean task a: ...") when it is an
    /// environment failure (bad input reads best as it is).
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        if self.kind == ErrorKind::Environment {
            self.message = format!("{what}: {}", self.message);
        }
        self
    }

    /// The messages of the causes, outermost first, each only once (a cause whose text the
    /// message or an earlier cause already holds is left out).
    pub fn causes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = self
            .cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static));
        while let Some(error) = next {
            let text = error.to_string();
            if !self.message.contains(&text) && !out.iter().any(|o| o.contains(&text)) {
                out.push(text);
            }
            next = error.source();
        }
        out
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// The engine's result.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

impl From<ganger_store::StoreError> for EngineError {
    fn from(error: ganger_store::StoreError) -> Self {
        use ganger_store::StoreError as E;
        match &error {
            // A round running, a start under way: refusals that pass with time.
            E::Busy { .. } | E::StartPending { .. } => EngineError::passing(error.to_string()),
            // What is there already, or another holds: the asker can act on these.
            E::SlugTaken(_)
            | E::Stale { .. }
            | E::SessionTaken { .. }
            | E::AlreadyQueued(_)
            | E::FleetConflict { .. }
            | E::ClaimHeld { .. } => EngineError::conflict(error.to_string()),
            E::BeingCleaned { .. } => EngineError::invalid(error.to_string()),
            E::NotAllowed { .. } => EngineError::not_permitted(error.to_string()),
            // The database itself: its cause is kept, and it is never "bad input".
            _ => EngineError::environment("failed to use the state database", error),
        }
    }
}

impl From<ganger_git::GitError> for EngineError {
    fn from(error: ganger_git::GitError) -> Self {
        match &error {
            ganger_git::GitError::NotARepo { .. } => EngineError::invalid(error.to_string()),
            ganger_git::GitError::Spawn(_) => EngineError::environment("failed to run git", error)
                .hint("ganger needs git 2.38 or newer on PATH"),
            _ => EngineError::environment("git failed", error),
        }
    }
}

impl From<ganger_sandbox::SandboxError> for EngineError {
    fn from(error: ganger_sandbox::SandboxError) -> Self {
        use ganger_sandbox::SandboxError as E;
        match &error {
            // The request asks what the sandbox cannot do here: the asker can change it.
            E::Unusable { hint, .. } => {
                let hint = hint.clone();
                let refused = EngineError::invalid(error.to_string());
                match hint {
                    Some(hint) => refused.hint(hint),
                    None => refused,
                }
            }
            E::Unavailable { message, .. } => {
                EngineError::environment_message(message.clone()).caused_by(error)
            }
            _ => EngineError::environment("failed to run a process", error),
        }
    }
}

impl From<ganger_docker::DockerError> for EngineError {
    fn from(error: ganger_docker::DockerError) -> Self {
        EngineError::environment("Docker failed", error)
    }
}

impl From<crate::base::config::ConfigError> for EngineError {
    fn from(error: crate::base::config::ConfigError) -> Self {
        EngineError::invalid(error.to_string())
    }
}

impl From<ganger_agents::PlanError> for EngineError {
    fn from(error: ganger_agents::PlanError) -> Self {
        EngineError::invalid(error.to_string())
    }
}

impl EngineError {
    /// An I/O failure on `path`: an environment failure, its cause kept.
    pub fn io(action: &str, path: &std::path::Path, error: std::io::Error) -> Self {
        EngineError::environment(format!("failed to {action} {}", path.display()), error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_keep_their_exit_codes_and_causes_are_listed_once() {
        assert_eq!(ErrorKind::Invalid.exit_code(), 2);
        assert_eq!(ErrorKind::Environment.exit_code(), 70);
        let error = EngineError::io(
            "write",
            std::path::Path::new("/x/state.db"),
            std::io::Error::other("No space left on device"),
        );
        assert_eq!(error.kind, ErrorKind::Environment);
        assert_eq!(error.message, "failed to write /x/state.db");
        assert_eq!(error.causes(), ["No space left on device"]);
        let store = EngineError::from(ganger_store::StoreError::SlugTaken("a".into()));
        assert_eq!(store.kind, ErrorKind::Conflict);
        assert_eq!(store.kind.exit_code(), 2);
        assert!(store.causes().is_empty());
        let git = EngineError::from(ganger_git::GitError::Spawn(std::io::Error::from(
            std::io::ErrorKind::NotFound,
        )));
        assert_eq!(git.kind, ErrorKind::Environment);
        assert_eq!(git.message, "failed to run git");
        assert_eq!(git.causes(), ["failed to run git: entity not found"]);
    }

    #[test]
    fn every_refusal_exits_2_and_is_invalid_on_the_command_line_whatever_its_kind() {
        let table = [
            (ErrorKind::Invalid, 2, "invalid"),
            (ErrorKind::NotFound, 2, "invalid"),
            (ErrorKind::Conflict, 2, "invalid"),
            (ErrorKind::Forbidden, 2, "invalid"),
            (ErrorKind::RoundFailed, 1, "round-failed"),
            (ErrorKind::ModelUnavailable, 3, "model-unavailable"),
            (ErrorKind::WaitTimeout, 4, "wait-timeout"),
            (ErrorKind::Environment, 70, "environment"),
        ];
        for (kind, code, name) in table {
            assert_eq!((kind.exit_code(), kind.as_str()), (code, name), "{kind:?}");
            assert_eq!(kind.is_refusal(), code == 2, "{kind:?}");
        }
    }

    #[test]
    fn the_stores_refusals_keep_their_kinds() {
        use ganger_store::StoreError as E;
        let claim = ganger_store::ClaimKey::new("c");
        let table = [
            (E::SlugTaken("a".into()), ErrorKind::Conflict, false),
            (E::AlreadyQueued("a".into()), ErrorKind::Conflict, false),
            (
                E::SessionTaken {
                    session: "s".into(),
                    slug: "a".into(),
                },
                ErrorKind::Conflict,
                false,
            ),
            (
                E::ClaimHeld { name: "c".into() },
                ErrorKind::Conflict,
                false,
            ),
            (
                E::NotAllowed {
                    slug: "a".into(),
                    commander: "bob".into(),
                    owner: "alice".into(),
                },
                ErrorKind::Forbidden,
                false,
            ),
            (
                E::Busy {
                    slug: "a".into(),
                    number: 1,
                    host_pid: None,
                },
                ErrorKind::Invalid,
                true,
            ),
            (
                E::BeingCleaned {
                    slug: "a".into(),
                    claim,
                },
                ErrorKind::Invalid,
                false,
            ),
        ];
        for (store, kind, passes) in table {
            let text = store.to_string();
            let error = EngineError::from(store);
            assert_eq!((error.kind, error.passes), (kind, passes), "{text}");
            assert_eq!(error.message, text);
        }
    }
}
