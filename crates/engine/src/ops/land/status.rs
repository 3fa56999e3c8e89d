//! `ganger land status`: the queue, the batches under test with what their landers found so
//! far (check runs, the bisection's probes, flaky checks), the last batches, and the tasks
//! sent back with why.

use crate::base::error::Result;
use crate::env::workspace::Workspace;
use crate::ops::land::report::{BatchEntry, LAND_STATUS_SCHEMA, LandStatus, QueueEntry};
use ganger_store::{LandBatch, LandItem};

/// How many ended batches the status shows.
const RECENT: u32 = 10;

pub(crate) fn status(ws: &Workspace) -> Result<LandStatus> {
    let mut status = LandStatus {
        schema: LAND_STATUS_SCHEMA,
        queue: Vec::new(),
        testing: Vec::new(),
        recent: Vec::new(),
        returned: Vec::new(),
        flaky: Vec::new(),
    };
    let Some(store) = ws.existing_store()? else {
        return Ok(status);
    };
    for item in store.land_items(false)? {
        match item.state.as_str() {
            "queued" | "testing" => status.queue.push(entry(item)),
            "returned" => status.returned.push(entry(item)),
            _ => {}
        }
    }
    for batch in store.land_batches(RECENT)? {
        if let Some(flaky) = batch.progress["flaky"].as_array() {
            for name in flaky.iter().filter_map(|n| n.as_str()) {
                if !status.flaky.iter().any(|f| f == name) {
                    status.flaky.push(name.to_owned());
                }
            }
        }
        if matches!(batch.state.as_str(), "testing" | "landing") {
            status.testing.push(batch_entry(batch));
        } else {
            status.recent.push(batch_entry(batch));
        }
    }
    Ok(status)
}

fn entry(item: LandItem) -> QueueEntry {
    QueueEntry {
        task: item.slug,
        base: item.base,
        commit: item.task_commit,
        state: item.state,
        priority: item.priority,
        queued_at: item.queued_at,
        batch: item.batch,
        reason: item.reason,
    }
}

fn batch_entry(batch: LandBatch) -> BatchEntry {
    BatchEntry {
        batch: batch.id,
        base: batch.base,
        head: batch.head,
        state: batch.state,
        tip: batch.tip,
        started_at: batch.started_at,
        ended_at: batch.ended_at,
        progress: batch.progress,
    }
}
