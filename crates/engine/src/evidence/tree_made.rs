//! How a task's worktree got its files (checked out, from the pool, a reflink copy of the
//! cached tree, an overlay) and which of the main checkout's folders are shared into it, kept
//! in its git record as `.git/worktrees/NAME/ganger-tree` (the way's word, then a shared
//! folder a line) so that the task's report can say so; it goes with the worktree.

use crate::base::notice::TreeMade;
use std::path::{Path, PathBuf};

fn record_file(worktree: &Path) -> Option<PathBuf> {
    let index = ganger_git::worktree_index(worktree).ok()?;
    Some(index.with_file_name("ganger-tree"))
}

/// Notes how the worktree at `worktree` was made; a note that cannot be written only leaves
/// the report without it.
pub(crate) fn record(worktree: &Path, made: TreeMade, shared: &[String]) {
    if let Some(file) = record_file(worktree) {
        let mut text = made.word().to_owned();
        for folder in shared {
            text.push('\n');
            text.push_str(folder);
        }
        let _ = std::fs::write(file, text);
    }
}

/// How the worktree at `worktree` was made and the folders shared into it, when ganger noted
/// it.
pub(crate) fn read(worktree: &Path) -> Option<(TreeMade, Vec<String>)> {
    let text = std::fs::read_to_string(record_file(worktree)?).ok()?;
    let mut lines = text.lines();
    let made = TreeMade::from_word(lines.next()?.trim())?;
    Some((made, lines.map(str::to_owned).collect()))
}
