//! Why a warm host ended, and the lines it writes of itself in its task's warm log: its start,
//! and its end as asked (`stops: WHY`) or on a failure of its agent (`fails: WHY`), which the
//! round that starts the task's next warm host reads back to say why there is a new one.

use super::paths::log_prefix;
use std::path::Path;

/// Why a warm host ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// As asked: idle, `warm stop`, a signal, its task's state gone.
    Asked(String),
    /// A failure: its agent died, its stdin closed, a cancelled turn would not end.
    Failed(String),
}

/// The log line of a warm host that starts for round `round`.
pub(crate) fn start_line(slug: &str, round: u32) -> String {
    format!("{} starts for round {round}", log_prefix(slug))
}

/// The log line of a warm host that ended for `stop`.
pub(crate) fn stop_line(slug: &str, stop: &Stop) -> String {
    match stop {
        Stop::Asked(why) => format!("{} stops: {why}", log_prefix(slug)),
        Stop::Failed(why) => format!("{} fails: {why}", log_prefix(slug)),
    }
}

/// Why the task's last warm host failed, when its last word in `log` is a failure (a host
/// killed with SIGKILL writes none, and its round was interrupted, which said so).
pub(crate) fn failed_last(log: &Path, slug: &str) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let prefix = log_prefix(slug);
    let last = text
        .lines()
        .rev()
        .filter_map(|line| line.strip_prefix(&prefix))
        .find(|rest| {
            [" starts", " stops: ", " fails: "]
                .iter()
                .any(|w| rest.starts_with(w))
        })?;
    last.strip_prefix(" fails: ").map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_last_word_of_failure_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("warm.log");
        let failed = Stop::Failed("the agent exited".into());
        let asked = Stop::Asked("idle for 3s".into());
        let write = |lines: &[String]| std::fs::write(&log, lines.join("\n") + "\n").unwrap();

        write(&[
            start_line("t", 1),
            "agent noise".into(),
            stop_line("t", &failed),
        ]);
        assert_eq!(failed_last(&log, "t").as_deref(), Some("the agent exited"));
        write(&[start_line("t", 1), stop_line("t", &asked)]);
        assert_eq!(failed_last(&log, "t"), None);
        // Killed outright: its start is its last word.
        write(&[stop_line("t", &failed), start_line("t", 2)]);
        assert_eq!(failed_last(&log, "t"), None);
        // Another task's lines are not this one's.
        write(&[stop_line("t", &failed), stop_line("other", &asked)]);
        assert_eq!(failed_last(&log, "t").as_deref(), Some("the agent exited"));
        assert_eq!(failed_last(&dir.path().join("none"), "t"), None);
    }
}
