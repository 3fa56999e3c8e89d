//! Resources, for clients that read them or subscribe to them: the task table
//! (`ganger://tasks`), a task's last round (`ganger://tasks/SLUG`, its report) and the
//! commander's journal after its cursor (`ganger://journal`), each the JSON document the command
//! line prints. Nothing else is a resource: any other URI is refused. A subscription is told
//! (`notifications/resources/updated`, through `watch.rs`) when what matters changed (a task's
//! round, status or owner, a new journal entry), not on every tick of a running round's clock.

use ganger_engine::{Engine, EngineError, StatusRequest, StatusView};
use serde_json::Value;
use std::time::Duration;

/// How often a subscribed resource is looked at.
pub const LOOK_EVERY: Duration = Duration::from_millis(250);

/// The task table's URI.
pub const TASKS: &str = "ganger://tasks";
/// The journal's URI.
pub const JOURNAL: &str = "ganger://journal";
const TASK_PREFIX: &str = "ganger://tasks/";

/// The resources there are now: the table, the journal, one per task.
pub fn list(engine: &Engine) -> Result<Vec<(String, String)>, EngineError> {
    let mut all = vec![
        (TASKS.to_owned(), "the task table".to_owned()),
        (JOURNAL.to_owned(), "the commander's journal".to_owned()),
    ];
    if let StatusView::List(list) = engine.status(&StatusRequest::default(), &mut |_| {})? {
        for task in list.tasks {
            let about = format!("task {}: its last round's report", task.slug);
            all.push((format!("{TASK_PREFIX}{}", task.slug), about));
        }
    }
    Ok(all)
}

/// Refuses a URI that is not one of ganger's resources, saying which there are. A task's
/// may name a task that does not exist yet (a subscriber hears when it starts), but not a
/// name no task can have.
pub fn check(engine: &Engine, uri: &str) -> Result<(), String> {
    if uri == TASKS || uri == JOURNAL {
        return Ok(());
    }
    let Some(slug) = uri.strip_prefix(TASK_PREFIX) else {
        return Err(format!(
            "no resource {uri}: ganger's are {TASKS}, {JOURNAL} and {TASK_PREFIX}SLUG"
        ));
    };
    match engine.find_task(slug) {
        Ok(_) => Ok(()),
        Err(error) => Err(format!("no resource {uri}: {}", error.message)),
    }
}

/// The resource at `uri` as its JSON document, or `None` for a URI ganger does not serve.
pub fn read(engine: &Engine, uri: &str) -> Option<Result<Value, EngineError>> {
    if uri == TASKS {
        let view = engine.status(&StatusRequest::default(), &mut |_| {});
        return Some(view.map(|view| match view {
            StatusView::List(list) => json(&list),
            StatusView::Round(report) => json(&report),
            StatusView::Pipeline(report) => json(&report),
        }));
    }
    if uri == JOURNAL {
        return Some(engine.watch(None, None, false).map(|page| json(&page)));
    }
    let slug = uri.strip_prefix(TASK_PREFIX)?;
    Some(engine.report_of(slug, None).map(|report| json(&report)))
}

/// What a subscriber of `uri` is told about: the parts of the document whose change is news.
pub fn fingerprint(engine: &Engine, uri: &str) -> Value {
    fingerprints(engine, &[uri.to_owned()])
        .pop()
        .unwrap_or(Value::Null)
}

/// The fingerprints of `uris`, the task table read once for all of them (a task's is its
/// row's round, status and owner).
pub fn fingerprints(engine: &Engine, uris: &[String]) -> Vec<Value> {
    let needs_table = uris.iter().any(|uri| uri != JOURNAL);
    let table = match needs_table.then(|| read(engine, TASKS)).flatten() {
        Some(Ok(document)) => document["tasks"].as_array().cloned().unwrap_or_default(),
        _ => Vec::new(),
    };
    let row = |task: &Value| {
        serde_json::json!([
            task["slug"],
            task["rounds"],
            task["last_status"],
            task["owner"]
        ])
    };
    uris.iter()
        .map(|uri| {
            if uri == TASKS {
                return Value::Array(table.iter().map(row).collect());
            }
            if uri == JOURNAL {
                let Some(Ok(document)) = read(engine, JOURNAL) else {
                    return Value::Null;
                };
                return document["entries"]
                    .as_array()
                    .and_then(|e| e.last())
                    .map_or(Value::Null, |e| e["id"].clone());
            }
            let slug = uri.strip_prefix(TASK_PREFIX).unwrap_or_default();
            table
                .iter()
                .find(|task| task["slug"] == slug)
                .map_or(Value::Null, row)
        })
        .collect()
}

fn json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
