//! The agent CLI's own edits of the project's files, taken back at the round's end before the
//! checks and the snapshot see them ([`ganger_agents::OwnEdit`]): the files' texts are read
//! before the agent starts, and each is compared with what it holds once the agent ended. A
//! file the agent changed as well keeps the agent's change.

use ganger_agents::Adapter;
use std::path::{Path, PathBuf};

/// The texts of the files a CLI rewrites for itself, as they were before the round.
pub(super) struct OwnEdits {
    edit: Option<ganger_agents::OwnEdit>,
    before: Vec<(PathBuf, String)>,
}

impl OwnEdits {
    /// Reads, before the agent starts, the files in `worktree` its CLI may rewrite.
    pub(super) fn before(adapter: Option<&dyn Adapter>, worktree: &Path) -> OwnEdits {
        let edit = adapter.and_then(Adapter::own_edit);
        let before = edit
            .iter()
            .flat_map(|edit| edit.files.iter())
            .filter_map(|file| {
                let path = worktree.join(file);
                Some((path.clone(), std::fs::read_to_string(&path).ok()?))
            })
            .collect();
        OwnEdits { edit, before }
    }

    /// Takes back the CLI's edits (once the agent ended); returns the files it wrote back.
    pub(super) fn take_back(&self) -> Vec<PathBuf> {
        let Some(edit) = &self.edit else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        for (path, before) in &self.before {
            let Ok(after) = std::fs::read_to_string(path) else {
                continue;
            };
            if let Some(undone) = edit.undo(before, &after)
                && std::fs::write(path, undone).is_ok()
            {
                taken.push(path.clone());
            }
        }
        taken
    }
}
