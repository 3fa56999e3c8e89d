//! How many rounds may run at once: in all, per agent, per model. The counts come from the
//! store's running rounds (the truth, so a restarted scheduler decides the same) plus what the
//! scheduler is starting right now.

use crate::base::error::{EngineError, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Limits on running rounds; a missing limit is no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// All rounds.
    pub global: Option<u32>,
    /// Rounds per agent, by the agent's name.
    #[serde(default)]
    pub agents: BTreeMap<String, u32>,
    /// Rounds per model (`provider/model`).
    #[serde(default)]
    pub models: BTreeMap<String, u32>,
}

impl Limits {
    /// Refuses a limit of 0 (nothing could ever run).
    pub fn check(&self) -> Result<()> {
        let zero = self.global == Some(0)
            || self.agents.values().any(|v| *v == 0)
            || self.models.values().any(|v| *v == 0);
        if zero {
            return Err(EngineError::invalid(
                "a limit of 0 would never run anything; give at least 1",
            ));
        }
        Ok(())
    }

    /// Whether one more round of `agent` on `model` fits beside `running`.
    pub fn allow(&self, running: &Running, agent: &str, model: Option<&str>) -> bool {
        if self.global.is_some_and(|limit| running.total >= limit) {
            return false;
        }
        if let Some(limit) = self.agents.get(agent)
            && running.agents.get(agent).copied().unwrap_or(0) >= *limit
        {
            return false;
        }
        if let Some(model) = model
            && let Some(limit) = self.models.get(model)
            && running.models.get(model).copied().unwrap_or(0) >= *limit
        {
            return false;
        }
        true
    }
}

/// Rounds running now, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Running {
    pub total: u32,
    pub agents: BTreeMap<String, u32>,
    pub models: BTreeMap<String, u32>,
}

impl Running {
    /// Counts one more round.
    pub fn add(&mut self, agent: &str, model: Option<&str>) {
        self.total += 1;
        *self.agents.entry(agent.to_owned()).or_default() += 1;
        if let Some(model) = model {
            *self.models.entry(model.to_owned()).or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_holds_on_its_own() {
        let limits = Limits {
            global: Some(3),
            agents: [("a".to_owned(), 2)].into(),
            models: [("m".to_owned(), 1)].into(),
        };
        let mut running = Running::default();
        assert!(limits.allow(&running, "a", Some("m")));
        running.add("a", Some("m"));
        assert!(!limits.allow(&running, "b", Some("m")));
        assert!(limits.allow(&running, "a", Some("n")));
        running.add("a", Some("n"));
        assert!(!limits.allow(&running, "a", None));
        assert!(limits.allow(&running, "b", None));
        running.add("b", None);
        assert!(!limits.allow(&running, "b", None));
        assert!(Limits::default().allow(&running, "x", None));
        assert!(limits.check().is_ok());
        assert!(
            Limits {
                global: Some(0),
                ..Limits::default()
            }
            .check()
            .is_err()
        );
    }
}
