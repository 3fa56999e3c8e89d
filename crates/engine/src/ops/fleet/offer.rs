//! What a worker offers the shared queue: its name, its capacity, and the agents and sandbox
//! kinds it runs. The scheduler takes only the items a worker's offer covers.

use ganger_events::SandboxKind;

/// What a worker offers the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub name: String,
    /// Rounds at once, at most.
    pub capacity: usize,
    pub agents: Vec<String>,
    pub sandboxes: Vec<SandboxKind>,
}

impl Offer {
    /// Whether this worker runs a round of `agent` in `sandbox` (`None`: a word that names no
    /// sandbox, which no worker runs).
    pub(crate) fn runs(&self, agent: &str, sandbox: Option<SandboxKind>) -> bool {
        self.agents.iter().any(|a| a == agent)
            && sandbox.is_some_and(|sandbox| self.sandboxes.contains(&sandbox))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_runs_only_the_agents_and_sandboxes_it_offers() {
        let offer = Offer {
            name: "w".into(),
            capacity: 1,
            agents: vec!["agent-a".into(), "agent-b".into()],
            sandboxes: vec![SandboxKind::Local, SandboxKind::Docker],
        };
        assert!(offer.runs("agent-a", Some(SandboxKind::Local)));
        assert!(offer.runs("agent-b", Some(SandboxKind::Docker)));
        assert!(!offer.runs("agent-c", Some(SandboxKind::Local)));
        assert!(!offer.runs("agent-a", Some(SandboxKind::Bwrap)));
        assert!(!offer.runs("agent-a", None), "a misspelt sandbox");
    }
}
