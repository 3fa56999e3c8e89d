//! Putting a worktree's files back to a snapshot (`ganger rewind`): the files become exactly
//! the snapshot's (files made since are removed, changed ones rewritten, removed ones back),
//! while the branch, `HEAD` and the index stay as they are, so that the worker's changes are
//! still uncommitted changes against the base. Ignored files are not part of a snapshot and
//! are left alone. What the files were before is snapshotted first, so nothing is lost.

use crate::command::Git;
use crate::discover::Repo;
use crate::error::GitError;
use crate::snapshot::Snapshot;
use std::path::Path;

/// What a restore changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// The snapshot of the files as they were before the restore.
    pub previous: String,
    /// Paths written back (changed or removed since the snapshot), and paths removed (made
    /// since the snapshot).
    pub written: Vec<String>,
    pub removed: Vec<String>,
}

impl Repo {
    /// Makes the worktree's files those of the snapshot `commit`, saving what they were to
    /// `save_ref` first (see the module comment).
    pub fn restore_files(&self, commit: &str, save_ref: &str) -> Result<Restored, GitError> {
        let now: Snapshot =
            self.snapshot(Some(save_ref), "ganger: the worktree before a rewind")?;
        let git = Git::new(&self.worktree);
        let listing = git.run([
            "diff",
            "--name-status",
            "--no-renames",
            "-z",
            commit,
            &now.commit,
        ])?;
        let mut written = Vec::new();
        let mut removed = Vec::new();
        let mut fields = listing.split(|&b| b == 0).filter(|f| !f.is_empty());
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let path = String::from_utf8_lossy(path).into_owned();
            match status.first() {
                // In the worktree now, not in the snapshot.
                Some(b'A') => removed.push(path),
                _ => written.push(path),
            }
        }
        for path in &removed {
            remove_with_empty_parents(&self.worktree, path)?;
        }
        if !written.is_empty() {
            self.write_from_tree(commit, &written)?;
        }
        Ok(Restored {
            previous: now.commit,
            written,
            removed,
        })
    }

    /// Writes `paths` of `commit`'s tree into the worktree through a temporary index, so that
    /// the worktree's own index is not touched.
    fn write_from_tree(&self, commit: &str, paths: &[String]) -> Result<(), GitError> {
        let temp = self
            .git_dir
            .join(format!("ganger-restore-{}.index", std::process::id()));
        let git = Git::new(&self.worktree).with_env("GIT_INDEX_FILE", &temp);
        let result = git.run(["read-tree", commit]).and_then(|_| {
            let mut input = Vec::new();
            for path in paths {
                input.extend_from_slice(path.as_bytes());
                input.push(0);
            }
            git.run_with_input(["checkout-index", "--force", "-z", "--stdin"], Some(&input))
        });
        let _ = std::fs::remove_file(&temp);
        result.map(|_| ())
    }
}

/// Removes a file (or symbolic link) of the worktree, then its directories left empty.
fn remove_with_empty_parents(worktree: &Path, path: &str) -> Result<(), GitError> {
    let full = worktree.join(path);
    match std::fs::symlink_metadata(&full) {
        Ok(meta) if meta.is_dir() => {
            std::fs::remove_dir_all(&full).map_err(|e| GitError::io(&full, e))?
        }
        Ok(_) => std::fs::remove_file(&full).map_err(|e| GitError::io(&full, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(GitError::io(&full, e)),
    }
    let mut dir = full.parent();
    while let Some(parent) = dir {
        if parent == worktree || !parent.starts_with(worktree) {
            break;
        }
        // Fails (and stops) on the first directory that is not empty.
        if std::fs::remove_dir(parent).is_err() {
            break;
        }
        dir = parent.parent();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::test_repo::{TestRepo, git_in};

    #[test]
    fn the_files_go_back_and_the_index_and_head_stay() {
        let repo = TestRepo::new();
        let root = repo.root();
        let found = crate::discover(root).unwrap();
        let head = repo.git(&["rev-parse", "HEAD"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        std::fs::write(root.join("README.md"), "round 1\n").unwrap();
        let after_one = found
            .snapshot(Some("refs/ganger/t/round-1"), "one")
            .unwrap();
        std::fs::create_dir_all(root.join("deep/er")).unwrap();
        std::fs::write(root.join("deep/er/b.txt"), "b\n").unwrap();
        std::fs::write(root.join("a.txt"), "a changed\n").unwrap();
        std::fs::remove_file(root.join("src/lib.txt")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("build.log"), "ignored\n").unwrap();

        let restored = found
            .restore_files(&after_one.commit, "refs/ganger/t/rewind-1")
            .unwrap();
        assert_eq!(restored.removed, [".gitignore", "deep/er/b.txt"]);
        assert_eq!(restored.written, ["a.txt", "src/lib.txt"]);
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
        assert_eq!(
            std::fs::read_to_string(root.join("README.md")).unwrap(),
            "round 1\n"
        );
        assert!(root.join("src/lib.txt").is_file());
        assert!(!root.join("deep").exists(), "empty directories go too");
        // Nothing was staged or committed: the worker's changes are uncommitted again.
        assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
        assert_eq!(
            repo.git(&["status", "--porcelain", "--untracked-files=all"]),
            " M README.md\n?? a.txt\n?? build.log"
        );
        // What the files were is kept.
        let saved = git_in(root, &["show", "refs/ganger/t/rewind-1:deep/er/b.txt"]);
        assert_eq!(saved, "b");
    }
}
