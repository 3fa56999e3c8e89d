//! A project file an agent CLI rewrites for itself when it starts, which is not the task's
//! work: OpenCode 1.18.33 puts `"$schema": "https://opencode.ai/config.json"` at the top of a
//! project's `opencode.json` that lacks it (its config loader replaces the file's opening `{`,
//! and any blank before it, with `{` and that line: measured in docs/agents/opencode-measured.md).
//! Every OpenCode task would otherwise report the file changed, and a merge would commit it.
//! [`OwnEdit::undo`] tells that edit from the agent's own work on the file and takes back only
//! the CLI's.

/// A CLI's edit of a project file: which files, and what it puts in place of their opening
/// `{`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnEdit {
    /// The files the CLI rewrites, relative to the worktree (its working directory).
    pub files: &'static [&'static str],
    /// What the file starts with once the CLI rewrote it: `{` and the line the CLI adds.
    pub opening: &'static str,
    /// What a file the CLI leaves as it is holds (OpenCode's: any `"$schema"`).
    pub unless: &'static str,
}

impl OwnEdit {
    /// The file's text with the CLI's edit taken back, given its text `before` the round and
    /// `after` it; `None` when there is nothing to take back (the file had the line already,
    /// or the CLI did not add it). When the agent changed the file as well, only the CLI's
    /// line goes.
    pub fn undo(&self, before: &str, after: &str) -> Option<String> {
        if before.contains(self.unless) || !after.starts_with(self.opening) {
            return None;
        }
        let rewritten = match before.trim_start().strip_prefix('{') {
            Some(rest) => format!("{}{rest}", self.opening),
            None => return None,
        };
        if after == rewritten {
            return Some(before.to_owned());
        }
        Some(format!("{{{}", &after[self.opening.len()..]))
    }
}

#[cfg(test)]
mod tests {
    use super::OwnEdit;

    const EDIT: OwnEdit = OwnEdit {
        files: &["opencode.json"],
        opening: "{\n  \"$schema\": \"https://opencode.ai/config.json\",",
        unless: "\"$schema\"",
    };

    #[test]
    fn the_clis_line_is_taken_back_and_the_agents_work_kept() {
        let before = "{\n  \"mcp\": {}\n}\n";
        let rewritten =
            "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {}\n}\n";
        assert_eq!(EDIT.undo(before, rewritten).as_deref(), Some(before));
        // Blanks before the opening brace, which the CLI drops, come back too.
        let padded = "\n\n{\n  \"mcp\": {}\n}\n";
        assert_eq!(EDIT.undo(padded, rewritten).as_deref(), Some(padded));
        // The agent changed the file as well: its change stays, the CLI's line goes.
        let worked = "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {},\n  \"model\": \"x/y\"\n}\n";
        assert_eq!(
            EDIT.undo(before, worked).as_deref(),
            Some("{\n  \"mcp\": {},\n  \"model\": \"x/y\"\n}\n")
        );
        // Nothing to take back: the project has the line, or the CLI did not add it.
        assert_eq!(EDIT.undo(rewritten, rewritten), None);
        let own_schema = "{\"$schema\": \"./schema.json\"}";
        assert_eq!(EDIT.undo(own_schema, rewritten), None);
        assert_eq!(EDIT.undo(before, before), None);
        assert_eq!(EDIT.undo(before, "{\"model\": \"x/y\"}"), None);
    }
}
