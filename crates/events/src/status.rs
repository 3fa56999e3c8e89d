//! The statuses a round can be in. A round ends in exactly one of the final ones.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Where a round stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoundStatus {
    /// The round's host is running the agent.
    Running,
    /// The agent finished and reported no failure.
    Done,
    /// The agent failed, reported an error, or ended without finishing its work.
    Failed,
    /// The round ran past its wall-clock limit and was stopped.
    TimedOut,
    /// The agent made no progress for the stall limit and was stopped.
    Stalled,
    /// Someone stopped the round (`ganger cancel`, or a signal to its host).
    Cancelled,
    /// The round's host died before it could record an end.
    Interrupted,
}

impl RoundStatus {
    /// Every status, in a stable order (for documentation and tests).
    pub const ALL: [RoundStatus; 7] = [
        RoundStatus::Running,
        RoundStatus::Done,
        RoundStatus::Failed,
        RoundStatus::TimedOut,
        RoundStatus::Stalled,
        RoundStatus::Cancelled,
        RoundStatus::Interrupted,
    ];

    /// The status as written in the store, reports and `--json`.
    pub fn as_str(self) -> &'static str {
        match self {
            RoundStatus::Running => "running",
            RoundStatus::Done => "done",
            RoundStatus::Failed => "failed",
            RoundStatus::TimedOut => "timed-out",
            RoundStatus::Stalled => "stalled",
            RoundStatus::Cancelled => "cancelled",
            RoundStatus::Interrupted => "interrupted",
        }
    }

    /// Whether the round has ended.
    pub fn is_final(self) -> bool {
        self != RoundStatus::Running
    }
}

impl fmt::Display for RoundStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status string that names no [`RoundStatus`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStatus(pub String);

impl fmt::Display for UnknownStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown round status {:?}", self.0)
    }
}

impl std::error::Error for UnknownStatus {}

impl FromStr for RoundStatus {
    type Err = UnknownStatus;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        RoundStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
            .ok_or_else(|| UnknownStatus(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_text_and_json() {
        for status in RoundStatus::ALL {
            assert_eq!(status.as_str().parse::<RoundStatus>(), Ok(status));
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
        assert!("finished".parse::<RoundStatus>().is_err());
    }
}
