//! Which tasks carry a label with a given value: `status` in a front end that filters the task
//! table by label (the MCP server's `status` tool) asks here, since the table's rows do not
//! carry their labels.

use crate::api::Engine;
use crate::base::error::Result;

impl Engine {
    /// The slugs of the tasks whose label `key` is `value`.
    pub fn tasks_labelled(&self, key: &str, value: &str) -> Result<Vec<String>> {
        crate::task::labels::check_key(key)?;
        let Some(store) = self.workspace().existing_store()? else {
            return Ok(Vec::new());
        };
        Ok(store
            .labelled_tasks(key)?
            .into_iter()
            .filter(|task| task.value.as_deref() == Some(value))
            .map(|task| task.slug)
            .collect())
    }
}
