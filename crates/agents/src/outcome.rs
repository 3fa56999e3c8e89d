//! How an agent process ended, and what an adapter concludes about the round from that and its
//! stream. Kept apart from any one adapter: every adapter's verdict takes and gives these.

use ganger_events::RoundSummary;
use std::fmt;

/// How an agent process ended: its exit code, or the signal that killed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentExit {
    /// The process exited with this code.
    Code(i32),
    /// The process was killed by this signal.
    Signal(i32),
}

impl AgentExit {
    /// Whether the process exited with code 0.
    pub fn success(self) -> bool {
        self == AgentExit::Code(0)
    }

    /// How the process ended, said after its name: "exited with code 1", "was killed by
    /// signal 9 (SIGKILL)".
    pub fn said(self) -> String {
        match self {
            AgentExit::Code(_) => self.to_string(),
            AgentExit::Signal(_) => format!("was {self}"),
        }
    }
}

#[cfg(unix)]
impl From<std::process::ExitStatus> for AgentExit {
    fn from(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => AgentExit::Code(code),
            (None, Some(signal)) => AgentExit::Signal(signal),
            // Stopped or continued: not an end. Report the raw status rather than invent one.
            (None, None) => AgentExit::Code(status.into_raw()),
        }
    }
}

impl fmt::Display for AgentExit {
    /// "exited with code 1", "killed by signal 9 (SIGKILL)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AgentExit::Code(code) => write!(f, "exited with code {code}"),
            AgentExit::Signal(signal) => {
                write!(f, "killed by signal {signal}")?;
                match signal_name(signal) {
                    Some(name) => write!(f, " ({name})"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The usual name of a Linux signal a supervisor is likely to see.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// The first error a round's summary kept, for a verdict's reason.
pub(crate) fn first_error(summary: &RoundSummary) -> &str {
    summary.errors.first().map_or(NO_MESSAGE, String::as_str)
}

/// The first refused tool call a round's summary kept, for a verdict's reason.
pub(crate) fn first_refusal(summary: &RoundSummary) -> &str {
    summary
        .rejections
        .first()
        .map_or(NO_MESSAGE, String::as_str)
}

/// What a verdict says of an error or a refusal whose message the summary did not keep.
const NO_MESSAGE: &str = "(no message kept)";

/// " (and 2 more errors)" after the first of `count` of `what`, or nothing for a single one.
pub(crate) fn more(count: u64, what: &str) -> String {
    match count {
        0 | 1 => String::new(),
        2 => format!(" (and 1 more {what})"),
        count => format!(" (and {} more {what}s)", count - 1),
    }
}

/// An adapter's conclusion about a finished round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The agent finished its work and reported no failure.
    pub done: bool,
    /// Why the round failed, in one readable sentence naming the real cause; `None` when done.
    pub reason: Option<String>,
}

impl Verdict {
    /// The round is done.
    pub fn done() -> Verdict {
        Verdict {
            done: true,
            reason: None,
        }
    }

    /// The round failed, for this reason.
    pub fn failed(reason: impl Into<String>) -> Verdict {
        Verdict {
            done: false,
            reason: Some(reason.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_read_as_sentences() {
        assert_eq!(AgentExit::Code(1).to_string(), "exited with code 1");
        assert_eq!(
            AgentExit::Signal(9).to_string(),
            "killed by signal 9 (SIGKILL)"
        );
        assert_eq!(AgentExit::Signal(64).to_string(), "killed by signal 64");
        assert!(AgentExit::Code(0).success());
        assert!(!AgentExit::Signal(0).success());
    }

    #[cfg(unix)]
    #[test]
    fn a_std_exit_status_maps_to_code_or_signal() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            AgentExit::from(std::process::ExitStatus::from_raw(3 << 8)),
            AgentExit::Code(3)
        );
        assert_eq!(
            AgentExit::from(std::process::ExitStatus::from_raw(9)),
            AgentExit::Signal(9)
        );
    }
}
