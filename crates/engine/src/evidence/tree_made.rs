//! How a task's worktree got its files (checked out, from the pool, a reflink copy of the
//! cached tree), kept in its git record as `.git/worktrees/NAME/ganger-tree` so that the
//! task's report can say so; it goes with the worktree.

use crate::base::notice::TreeMade;
use std::path::{Path, PathBuf};

fn record_file(worktree: &Path) -> Option<PathBuf> {
    let index = ganger_git::worktree_index(worktree).ok()?;
    Some(index.with_file_name("ganger-tree"))
}

/// Notes how the worktree at `worktree` was made; a note that cannot be written only leaves
/// the report without it.
pub(crate) fn record(worktree: &Path, made: TreeMade) {
    if let Some(file) = record_file(worktree) {
        let _ = std::fs::write(file, made.word());
    }
}

/// How the worktree at `worktree` was made, when ganger noted it.
pub(crate) fn read(worktree: &Path) -> Option<TreeMade> {
    let text = std::fs::read_to_string(record_file(worktree)?).ok()?;
    TreeMade::from_word(text.trim())
}
