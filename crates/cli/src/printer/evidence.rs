//! Human text for the evidence of fleets: the commander's journal (`ganger watch`) and task
//! groups (`ganger status --group-by`).

use ganger_engine::journal::{JournalPage, WatchEntry};
use ganger_engine::labels::TaskGroups;
use std::fmt::Write;

/// One journal entry: `#N time task: what`, then its `DONE:` line indented.
pub fn journal_entry_text(entry: &WatchEntry) -> String {
    let mut out = format!("#{} {} ", entry.id, entry.at);
    if let Some(task) = &entry.task {
        let _ = write!(out, "{task}: ");
    }
    out.push_str(&entry.summary);
    out.push('\n');
    if let Some(done) = &entry.done {
        let _ = writeln!(out, "  {done}");
    }
    out
}

/// A page of the journal, with how to acknowledge it.
pub fn journal_text(page: &JournalPage) -> String {
    if page.entries.is_empty() {
        return format!(
            "nothing new for {} (acknowledged up to entry {})\n",
            page.commander, page.cursor
        );
    }
    let mut out = String::new();
    for entry in &page.entries {
        out.push_str(&journal_entry_text(entry));
    }
    if let Some(last) = page.entries.last() {
        let _ = writeln!(out, "acknowledge with: ganger ack {}", last.id);
    }
    out
}

/// Task groups: per value, the task count, the count per state and the last `DONE:` line.
pub fn groups_text(groups: &TaskGroups) -> String {
    if groups.groups.is_empty() {
        return "no tasks\n".to_owned();
    }
    let mut out = String::new();
    for group in &groups.groups {
        let value = group.value.as_ref().map_or_else(
            || format!("(no {})", groups.key),
            |v| format!("{}={v}", groups.key),
        );
        let states: Vec<String> = group
            .states
            .iter()
            .map(|(state, count)| format!("{state} {count}"))
            .collect();
        let _ = writeln!(
            out,
            "{value}: {} task{} ({})",
            group.tasks,
            if group.tasks == 1 { "" } else { "s" },
            states.join(", ")
        );
        if let (Some(done), Some(task)) = (&group.done, &group.done_task) {
            let _ = writeln!(out, "  last {done}  ({task})");
        }
    }
    out
}
