//! The engine's calls for the agents kept warm (docs/warm.md): list them with their memory,
//! and stop them.

use crate::api::Engine;
use crate::base::error::Result;
use crate::round::warm::{WarmAgentInfo, list_warm, stop_warm};
use serde::Serialize;

/// A warm agent as `ganger warm list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct WarmAgent {
    #[serde(flatten)]
    pub info: WarmAgentInfo,
    /// The resident memory of every process of the agent.
    pub memory_bytes: u64,
}

impl Engine {
    /// The repository's warm agents, least recently used first.
    pub fn warm_agents(&self) -> Result<Vec<WarmAgent>> {
        let store = self.workspace().open_store()?;
        Ok(list_warm(self.workspace(), &*store)
            .into_iter()
            .map(|info| WarmAgent {
                memory_bytes: info.memory_bytes(),
                info,
            })
            .collect())
    }

    /// The warm agent of `slug`, while its host lives (and its record can be read).
    pub fn warm_agent(&self, slug: &str) -> Result<Option<WarmAgent>> {
        let store = self.workspace().open_store()?;
        Ok(
            crate::round::warm::registry::live(self.workspace(), &*store, slug).map(|info| {
                WarmAgent {
                    memory_bytes: info.memory_bytes(),
                    info,
                }
            }),
        )
    }

    /// Stops the warm agents of `slugs` (every one with `all`); returns the tasks whose agent
    /// was stopped.
    pub fn stop_warm(&self, slugs: &[String], all: bool) -> Result<Vec<String>> {
        let ws = self.workspace();
        let store = ws.open_store()?;
        let slugs: Vec<String> = if all {
            list_warm(ws, &*store)
                .into_iter()
                .map(|info| info.slug)
                .collect()
        } else {
            slugs.to_vec()
        };
        // Whatever was learnt of an agent that would not start warm is tried again.
        crate::round::warm::identity::forget_all_unable(ws);
        let mut stopped = Vec::new();
        for slug in slugs {
            crate::round::warm::identity::forget_failed_start(ws, &slug);
            if stop_warm(ws, &*store, &slug)? {
                stopped.push(slug);
            }
        }
        Ok(stopped)
    }
}
