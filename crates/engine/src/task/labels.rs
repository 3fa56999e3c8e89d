//! Labels on tasks (`ganger start --label KEY=VALUE`) and `ganger status --group-by KEY`:
//! per value of the key, how many tasks are in each state and the last `DONE:` line, for
//! fleets too big to read line by line.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_store::LabelledTask;
use serde::Serialize;
use std::collections::BTreeMap;

/// The schema of `status --group-by`.
pub const GROUPS_SCHEMA: &str = "ganger.task-groups/1";
/// The label that asks for a task to be queued to land once its last round passes its checks
/// (`land=true`; a fleet file's `land = true`), by the lander inside `serve` or a worker.
pub const LAND_LABEL: &str = "land";
/// The longest label key and value.
const MAX_KEY: usize = 48;
const MAX_VALUE: usize = 200;

/// Checks a label key: lower-case letters, digits, `.`, `_` and `-`, from a letter or digit.
pub fn check_key(key: &str) -> Result<()> {
    let bytes = key.as_bytes();
    let first_ok = bytes
        .first()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let rest_ok = bytes
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.'));
    if first_ok && rest_ok && bytes.len() <= MAX_KEY {
        Ok(())
    } else {
        Err(EngineError::invalid(format!(
            "invalid label key {key:?}: use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most {MAX_KEY} characters"
        )))
    }
}

/// Parses `--label KEY=VALUE` arguments; a key given twice keeps its last value.
pub fn parse_labels(args: &[String]) -> Result<Vec<(String, String)>> {
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    for arg in args {
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| EngineError::invalid(format!("--label {arg:?}: expected KEY=VALUE")))?;
        check_key(key)?;
        if value.is_empty() || value.chars().count() > MAX_VALUE || value.contains(['\n', '\r']) {
            return Err(EngineError::invalid(format!(
                "--label {arg:?}: the value must be one line of 1 to {MAX_VALUE} characters"
            )));
        }
        labels.insert(key.to_owned(), value.to_owned());
    }
    Ok(labels.into_iter().collect())
}

/// The tasks of one value of the key.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskGroup {
    /// The label's value; `None` for the tasks without the label.
    pub value: Option<String>,
    pub tasks: usize,
    /// How many tasks are in each state (their last round's status; `new` before any).
    pub states: BTreeMap<String, usize>,
    /// The group's most recent `DONE:` line, and its task.
    pub done: Option<String>,
    pub done_task: Option<String>,
}

/// `ganger status --group-by KEY`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskGroups {
    pub schema: &'static str,
    pub key: String,
    pub groups: Vec<TaskGroup>,
}

/// Groups tasks by their value of `key` (the tasks without it last).
pub fn group(key: &str, tasks: Vec<LabelledTask>) -> TaskGroups {
    let mut groups: BTreeMap<Option<String>, (TaskGroup, i64)> = BTreeMap::new();
    for task in tasks {
        let (group, done_at) = groups.entry(task.value.clone()).or_insert_with(|| {
            (
                TaskGroup {
                    value: task.value.clone(),
                    tasks: 0,
                    states: BTreeMap::new(),
                    done: None,
                    done_task: None,
                },
                i64::MIN,
            )
        });
        group.tasks += 1;
        let state = task.last_status.unwrap_or_else(|| "new".to_owned());
        *group.states.entry(state).or_insert(0) += 1;
        if let (Some(line), Some(at)) = (task.done, task.done_at)
            && at >= *done_at
        {
            *done_at = at;
            group.done = Some(line);
            group.done_task = Some(task.slug);
        }
    }
    let mut groups: Vec<TaskGroup> = groups.into_values().map(|(group, _)| group).collect();
    // `None` sorts first in a BTreeMap: the unlabelled tasks go last.
    if groups.first().is_some_and(|g| g.value.is_none()) {
        groups.rotate_left(1);
    }
    TaskGroups {
        schema: GROUPS_SCHEMA,
        key: key.to_owned(),
        groups,
    }
}

/// The task groups of `key` in this repository.
pub fn task_groups(ws: &Workspace, key: &str) -> Result<TaskGroups> {
    check_key(key)?;
    let Some(mut store) = ws.existing_store()? else {
        return Ok(group(key, Vec::new()));
    };
    crate::round::reaper::settle_running(ws, &mut *store, &mut |_: crate::Notice| {})?;
    Ok(group(key, store.labelled_tasks(key)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(
        slug: &str,
        value: Option<&str>,
        status: &str,
        done: Option<(&str, i64)>,
    ) -> LabelledTask {
        LabelledTask {
            slug: slug.into(),
            value: value.map(Into::into),
            last_status: Some(status.into()),
            done: done.map(|(line, _)| line.into()),
            done_at: done.map(|(_, at)| at),
        }
    }

    #[test]
    fn groups_count_states_and_keep_the_latest_done_line() {
        let groups = group(
            "team",
            vec![
                task("a", Some("red"), "done", Some(("DONE: a", 5))),
                task("b", Some("red"), "failed", None),
                task("c", Some("red"), "done", Some(("DONE: c", 9))),
                task("d", None, "running", None),
                task("e", Some("blue"), "done", Some(("DONE: e", 1))),
            ],
        );
        let values: Vec<Option<&str>> = groups.groups.iter().map(|g| g.value.as_deref()).collect();
        assert_eq!(values, [Some("blue"), Some("red"), None]);
        let red = &groups.groups[1];
        assert_eq!(red.tasks, 3);
        assert_eq!(
            red.states,
            BTreeMap::from([("done".to_owned(), 2), ("failed".to_owned(), 1)])
        );
        assert_eq!(red.done.as_deref(), Some("DONE: c"));
        assert_eq!(red.done_task.as_deref(), Some("c"));
    }

    #[test]
    fn labels_are_checked() {
        assert_eq!(
            parse_labels(&["team=red".into(), "team=blue".into(), "k.v=x y".into()]).unwrap(),
            [
                ("k.v".to_owned(), "x y".to_owned()),
                ("team".to_owned(), "blue".to_owned())
            ]
        );
        for bad in ["team", "=x", "Team=x", "team=", "a/b=x"] {
            assert!(parse_labels(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
