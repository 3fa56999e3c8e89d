//! Whether the base has a task's work already: its commit (merged, or a batch's parent), or
//! a copy of it that `[land] mode = "rebase"` made, which says in its message which commit it
//! was rebased from. Searched among the commits the base gained since the task's commit
//! forked from it, so the cost is that of the task's age, not of the base's history.

use crate::base::error::Result;
use ganger_git::Repo;

/// Whether `head` has `commit`, or a rebased copy of it.
pub(crate) fn base_has(main: &Repo, commit: &str, head: &str) -> Result<bool> {
    if main.is_ancestor(commit, head)? {
        return Ok(true);
    }
    let grep = format!("--grep=rebased from {commit}.");
    let not_before = format!("^{commit}");
    let found = main.git().run([
        "log",
        "-F",
        "-n",
        "1",
        "--format=%H",
        grep.as_str(),
        head,
        not_before.as_str(),
    ])?;
    Ok(found.iter().any(|b| !b.is_ascii_whitespace()))
}
