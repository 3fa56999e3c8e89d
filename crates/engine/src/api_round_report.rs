//! The report of any round of a task, not only its last (`ganger status SLUG` shows the
//! last): a front end that lets a commander look back at an earlier round (the MCP server's
//! `report` tool) asks here.

use crate::api::Engine;
use crate::error::{EngineError, Result};
use crate::report::RoundReport;

impl Engine {
    /// Round `round` of `slug` (its last with `None`), reported as `status` reports it.
    pub fn report_of(&self, slug: &str, round: Option<u32>) -> Result<RoundReport> {
        let ws = self.workspace();
        let Some(store) = ws.existing_store()? else {
            crate::slug::check_slug(slug)?;
            return Err(EngineError::invalid(format!("no task {slug}")));
        };
        let task = crate::fix::find_task(&*store, slug)?;
        let found = store.round(task.id, round)?.ok_or_else(|| match round {
            Some(n) => EngineError::invalid(format!(
                "task {slug} has no round {n} (it has {})",
                task.rounds
            )),
            None => EngineError::invalid(format!("task {slug} has no rounds")),
        })?;
        Ok(self.round_report(&task, &found))
    }
}
