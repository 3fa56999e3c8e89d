//! ganger's git layer: finding the repository, making and checking worktrees, reading their
//! status, snapshotting a worktree after every round, and diffing.
//!
//! Working-tree changes go through the git CLI, never libgit2 or a reimplementation: git's
//! own `worktree add`, `add` and `status` apply the user's ignore rules, attributes, filters
//! and safety checks (libgit2's checkout does not protect uncommitted files the way git does,
//! and a worker's uncommitted work is exactly what ganger must never lose). What is read or
//! written in-process is the plain, stable part of the repository format: `HEAD` and loose
//! refs, the index file that `git add` just wrote, and loose tree and commit objects built from
//! it. That keeps a round's snapshot to one git process instead of four (see `snapshot.rs`),
//! and anything unusual (reftable refs, SHA-256 objects, split or sparse indexes) falls back to
//! the CLI. Git 2.38 or newer is required (`--path-format`, `worktree add --orphan` aside).

mod branches;
mod cached;
mod checkout;
mod command;
mod discover;
mod error;
mod index;
mod merge;
mod nested;
mod objects;
mod pooled;
mod refname;
mod refs;
pub mod remote;
mod remote_run;
mod restore;
mod snapshot;
mod status;
mod stream;
#[cfg(test)]
mod test_repo;
mod watch;
mod worktree;
mod worktree_add;

pub use cached::{restamp_index, worktree_index};
pub use command::Git;
pub use discover::{Repo, discover};
pub use error::GitError;
pub use index::{IndexEntry, read_index};
pub use merge::{TreeMerge, has_conflict_markers};
pub use refname::BadName;
pub use remote_run::{REMOTE_SILENCE, SILENCE_ENV, remote_silence};
pub use restore::Restored;
pub use snapshot::{ChangeKind, Scope, Snapshot, TreeChange, diff_entries};
pub use status::{StatusEntry, WorktreeStatus};
pub use stream::GitStream;
pub use watch::{ChangeWatch, WORTH_WATCHING, Watched};
pub use worktree::WorktreeInfo;

/// A 40-hex-digit object id (SHA-1 repositories).
pub type Oid = String;
