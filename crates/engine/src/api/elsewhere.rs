//! A round asked for on a host without the task's worktree ([`super::Sent::Elsewhere`]): it
//! went through the queue to the workers on the host that has the worktree, and the asker
//! follows it here, through the store, to its end, as if it ran here.

use super::Engine;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::ops::wait::WaitOutcome;
use ganger_store::QueueState;
use std::time::Duration;

/// How often the queue item is looked at until its round is recorded.
const LOOK_EVERY: Duration = Duration::from_millis(200);

impl Engine {
    /// Follows the round queue item `id` became to its end: the round's report; an error
    /// saying why when the item was refused or went stale without a round.
    pub fn follow_queued(&self, id: i64, notices: &mut dyn Notices) -> Result<WaitOutcome> {
        let store = self
            .ws
            .existing_store()?
            .ok_or_else(|| EngineError::not_found("no state database"))?;
        loop {
            let item = store
                .items_in(super::metrics::QUEUE_STATES, id.saturating_sub(1), 1)?
                .into_iter()
                .find(|item| item.id == id)
                .ok_or_else(|| EngineError::not_found(format!("no queue item {id}")))?;
            match (item.state, item.round) {
                (QueueState::Delivered | QueueState::Ended, Some(_)) => {
                    return crate::ops::wait::wait(&self.ws, &item.slug, None, notices);
                }
                (QueueState::Refused | QueueState::Stale | QueueState::Ended, _) => {
                    return Err(EngineError::invalid(format!(
                        "the round of task {} was not run: {}",
                        item.slug,
                        item.reason.as_deref().unwrap_or(item.state.as_str())
                    )));
                }
                _ => std::thread::sleep(LOOK_EVERY),
            }
        }
    }
}
