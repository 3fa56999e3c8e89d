//! The memory a stream-json reader needs across lines: a tool's result names only the call's
//! id, so the name and title of each call are kept from its `tool_use` block until its
//! `tool_result` arrives.

use serde_json::Value;
use std::collections::HashMap;

/// The name of a tool call whose `tool_use` block was never seen.
pub const UNNAMED_TOOL: &str = "?";

/// The argument fields that make a readable title, in order of preference.
const TITLE_FIELDS: [&str; 9] = [
    "file_path",
    "notebook_path",
    "absolute_path",
    "path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
];

/// The longest title kept, in characters.
const TITLE_CHARS: usize = 200;

/// A call that started and has not ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCall {
    pub name: String,
    pub title: Option<String>,
}

/// The calls started and not yet ended, by id.
#[derive(Debug, Clone, Default)]
pub struct ToolCalls {
    open: HashMap<String, OpenCall>,
}

impl ToolCalls {
    /// Remembers a call that started.
    pub fn start(&mut self, id: Option<String>, call: OpenCall) {
        if let Some(id) = id {
            self.open.insert(id, call);
        }
    }

    /// A call still open, by id.
    pub fn get(&self, id: Option<&str>) -> Option<&OpenCall> {
        self.open.get(id?)
    }

    /// The call that ended, forgotten now; an unknown id gives an unnamed call.
    pub fn end(&mut self, id: Option<&str>) -> OpenCall {
        id.and_then(|id| self.open.remove(id))
            .unwrap_or_else(|| OpenCall {
                name: UNNAMED_TOOL.to_owned(),
                title: None,
            })
    }

    /// Forgets every call (the run ended: its calls will never report).
    pub fn clear(&mut self) {
        self.open.clear();
    }
}

/// A short title for a call's arguments: the path, command or pattern it is about, first line
/// only.
pub fn title(input: Option<&Value>) -> Option<String> {
    let input = input?.as_object()?;
    let text = TITLE_FIELDS
        .iter()
        .find_map(|field| input.get(*field)?.as_str().filter(|s| !s.trim().is_empty()))?;
    let line = text.trim().lines().next().unwrap_or_default();
    Some(line.chars().take(TITLE_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn titles_prefer_paths_then_commands_and_keep_one_line() {
        let write = json!({"file_path": "/p/round1.txt", "content": "x"});
        assert_eq!(title(Some(&write)).as_deref(), Some("/p/round1.txt"));
        let bash = json!({"command": "printf 'a' > f\ncat f", "description": "write"});
        assert_eq!(title(Some(&bash)).as_deref(), Some("printf 'a' > f"));
        assert_eq!(title(Some(&json!({"todos": []}))), None);
        assert_eq!(title(Some(&json!("text"))), None);
        assert_eq!(title(None), None);
    }

    #[test]
    fn a_result_names_the_call_it_answers_once() {
        let mut calls = ToolCalls::default();
        let write = OpenCall {
            name: "Write".into(),
            title: Some("a.txt".into()),
        };
        calls.start(Some("toolu_1".into()), write.clone());
        assert_eq!(calls.end(Some("toolu_1")), write);
        assert_eq!(calls.end(Some("toolu_1")).name, UNNAMED_TOOL);
        assert_eq!(calls.end(None).name, UNNAMED_TOOL);
    }
}
