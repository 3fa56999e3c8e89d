//! What a worker offers the shared queue: its name, its capacity, and the agents and sandbox
//! kinds it runs. The scheduler takes only the items a worker's offer covers.

/// What a worker offers the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub name: String,
    /// Rounds at once, at most.
    pub capacity: usize,
    pub agents: Vec<String>,
    pub sandboxes: Vec<String>,
}

impl Offer {
    /// Whether this worker runs a round of `agent` in `sandbox`.
    pub(crate) fn runs(&self, agent: &str, sandbox: &str) -> bool {
        self.agents.iter().any(|a| a == agent) && self.sandboxes.iter().any(|s| s == sandbox)
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
            sandboxes: vec!["local".into(), "docker".into()],
        };
        assert!(offer.runs("agent-a", "local"));
        assert!(offer.runs("agent-b", "docker"));
        assert!(!offer.runs("agent-c", "local"));
        assert!(!offer.runs("agent-a", "bwrap"));
    }
}
