//! Resources, for clients that read them or subscribe to them: the task table
//! (`ganger://tasks`), a task's last round (`ganger://tasks/SLUG`, its report) and the
//! commander's journal after its cursor (`ganger://journal`), each the JSON document the command
//! line prints. A subscription is a task of the server that looks at its resource every
//! [`LOOK_EVERY`] and sends `notifications/resources/updated` when what matters changed (a
//! task's round or status, a new journal entry), not on every tick of a running round's clock.

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

/// What a subscriber is told about: the parts of the document whose change is news.
pub fn fingerprint(engine: &Engine, uri: &str) -> Value {
    let Some(Ok(document)) = read(engine, uri) else {
        return Value::Null;
    };
    if uri == TASKS {
        let tasks: Vec<Value> = document["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| serde_json::json!([t["slug"], t["rounds"], t["last_status"], t["owner"]]))
            .collect();
        return Value::Array(tasks);
    }
    if uri == JOURNAL {
        return document["entries"]
            .as_array()
            .and_then(|e| e.last())
            .map_or(Value::Null, |e| e["id"].clone());
    }
    serde_json::json!([document["round"], document["status"], document["owner"]])
}

fn json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
