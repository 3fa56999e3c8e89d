//! Compact text for a model to read: the few lines that decide the next step (status, the
//! worker's answer and `DONE:` line, files, checks, cost), where the structured content keeps
//! every field. Documents without a form of their own are written key by key from their JSON.

use ganger_engine::RoundReport;
use ganger_engine::journal::JournalPage;
use ganger_engine::report::TaskList;
use serde_json::Value;
use std::fmt::Write;

/// A round's report in a few lines.
pub fn report(r: &RoundReport) -> String {
    let mut out = String::new();
    let status = serde_json::to_value(r.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let _ = write!(
        out,
        "task {} round {} ({}): {status}",
        r.task, r.round, r.kind
    );
    if let Some(reason) = &r.reason {
        let _ = write!(out, ": {reason}");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "agent {} model {} session {} owner {}",
        r.agent,
        r.model.as_deref().unwrap_or("default"),
        r.session.as_deref().unwrap_or("-"),
        r.owner
    );
    if let Some(ms) = r.duration_ms {
        let _ = write!(out, "took {:.1}s, ", ms as f64 / 1000.0);
    }
    let _ = writeln!(
        out,
        "{} tool calls ({} failed), tokens {} in / {} out{}",
        r.tool_calls,
        r.tool_errors,
        r.tokens.input,
        r.tokens.output,
        r.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default()
    );
    // The DONE: line, unless the answer below ends with it.
    if let Some(done) = &r.done
        && !r
            .answer
            .as_deref()
            .is_some_and(|a| a.trim_end().ends_with(done.as_str()))
    {
        let _ = writeln!(out, "{done}");
    }
    if let Some(answer) = &r.answer {
        let clipped = if r.answer_chars > answer.chars().count() {
            format!(" (clipped; {} chars in all)", r.answer_chars)
        } else {
            String::new()
        };
        let _ = writeln!(out, "answer{clipped}:\n{}", answer.trim_end());
    }
    if r.changed.total > 0 {
        let _ = writeln!(
            out,
            "changed this round ({}): {}",
            r.changed.total,
            r.changed.shown.join(", ")
        );
    }
    if r.worktree_changes.total > 0 {
        let _ = writeln!(
            out,
            "worktree against base ({}): {}",
            r.worktree_changes.total,
            r.worktree_changes.shown.join(", ")
        );
    }
    for check in &r.checks {
        let _ = writeln!(out, "check {}: {}", check.name, check.state);
        if let Some(tail) = &check.tail {
            let _ = writeln!(out, "{}", tail.trim_end());
        }
    }
    for error in &r.errors {
        let _ = writeln!(out, "error: {error}");
    }
    for line in &r.stderr_tail {
        let _ = writeln!(out, "stderr: {line}");
    }
    out
}

/// A merge's outcome in a line or two.
pub fn merge(r: &ganger_engine::MergeReport) -> String {
    let rounds: Vec<String> = r.rounds.iter().map(u32::to_string).collect();
    let short = |c: &str| c[..c.len().min(12)].to_owned();
    match r.outcome {
        ganger_engine::MergeOutcome::Merged => format!(
            "merged {} into {} ({}, rounds {}): {}\n",
            r.branch,
            r.base,
            r.mode.as_str(),
            rounds.join(", "),
            r.commit.as_deref().map(short).unwrap_or_default()
        ),
        ganger_engine::MergeOutcome::Conflict => format!(
            "conflict: {} does not merge into {}; nothing was merged. Conflicting files: {}\n\
             (merge with fix: true has the worker resolve it)\n",
            r.branch,
            r.base,
            r.conflicts.join(", ")
        ),
        ganger_engine::MergeOutcome::Unresolved => format!(
            "unresolved: {}; nothing was merged. Files: {}\n",
            r.reason.as_deref().unwrap_or("the conflict remains"),
            r.conflicts.join(", ")
        ),
    }
}

/// The task table, one line a task.
pub fn task_table(list: &TaskList) -> String {
    if list.tasks.is_empty() {
        return "no tasks\n".to_owned();
    }
    let mut out = String::new();
    for t in &list.tasks {
        let status = t
            .last_status
            .and_then(|s| serde_json::to_value(s).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "new".to_owned());
        let _ = write!(
            out,
            "{}: {} rounds, {status}, {} {}, owner {}, ${:.4}",
            t.slug,
            t.rounds,
            t.agent,
            t.model.as_deref().unwrap_or("default"),
            t.owner,
            t.cost_usd
        );
        if let Some(done) = &t.done {
            let _ = write!(out, ", {done}");
        }
        out.push('\n');
    }
    out
}

/// The journal page: one line an entry, with how to acknowledge it.
pub fn journal(page: &JournalPage) -> String {
    if page.entries.is_empty() {
        return format!(
            "nothing new for {} (cursor {})\n",
            page.commander, page.cursor
        );
    }
    let mut out = String::new();
    for entry in &page.entries {
        let task = entry.task.as_deref().unwrap_or("-");
        let _ = writeln!(out, "#{} {task}: {}", entry.id, entry.summary);
    }
    if let Some(last) = page.entries.last() {
        let _ = writeln!(out, "acknowledge with ack upto={}", last.id);
    }
    out
}

/// Any document, key by key: scalars as `key: value`, lists of objects a line an item, what
/// is empty left out.
pub fn compact(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "schema" || is_empty(value) {
                    continue;
                }
                match value {
                    Value::Array(items) if items.iter().any(Value::is_object) => {
                        let _ = writeln!(out, "{key}:");
                        for item in items {
                            let _ = writeln!(out, "  {}", inline(item));
                        }
                    }
                    other => {
                        let _ = writeln!(out, "{key}: {}", inline(other));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{}", inline(other));
        }
    }
    out
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// A value on one line.
fn inline(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(inline).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !is_empty(v))
            .map(|(k, v)| format!("{k}={}", inline(v)))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn any_document_reads_key_by_key() {
        let doc = json!({
            "schema": "x/1",
            "task": "t",
            "owner": "bob",
            "allowed": [],
            "hint": null,
            "items": [{"id": 1, "slug": "a"}, {"id": 2, "slug": "b"}],
            "names": ["a", "b"],
        });
        assert_eq!(
            compact(&doc),
            "items:\n  id=1 slug=a\n  id=2 slug=b\nnames: a, b\nowner: bob\ntask: t\n"
        );
    }
}
