//! Worktrees: making one for a task, checking that a given path is one of this repository's,
//! removing one that ganger made when a start fails half way, and the operations on a
//! worktree (HEAD, status, snapshot, diff) that the engine calls.

use crate::command::Git;
use crate::discover::{Repo, discover};
use crate::error::GitError;
use crate::index::{IndexEntry, read_index};
use crate::snapshot::{self, Place, Scope, Snapshot};
use crate::status::{self, WorktreeStatus};
use crate::watch::ChangeWatch;
use crate::{Oid, refs};
use std::path::{Path, PathBuf};

/// What ganger needs to know of an existing worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    /// Its branch, or `None` when `HEAD` is detached.
    pub branch: Option<String>,
}

impl Repo {
    /// git run in the main checkout.
    pub fn git(&self) -> Git {
        Git::new(&self.main)
    }

    /// Creates a worktree at `path` on a new branch `branch` starting at the commit `base`,
    /// checked out and its `post-checkout` hook run, as `git worktree add -b` does, without
    /// git's look at every other worktree (see `worktree_add.rs`). `branch` must have passed
    /// `check_branch_name` (git takes it as it is) and `base` is an object id from
    /// `resolve_commit`.
    pub fn add_worktree(&self, path: &Path, branch: &str, base: &Oid) -> Result<(), GitError> {
        if branch.starts_with('-') || base.starts_with('-') {
            return Err(GitError::format(
                path,
                format!("refusing branch {branch:?} or base {base:?}: git would read an option"),
            ));
        }
        if self.add_worktree_directly(path, branch, base)?.is_some() {
            return Ok(());
        }
        self.add_worktree_with_git(path, branch, base)
    }

    /// The same with `git worktree add -b` itself, for a layout `add_worktree_directly` does
    /// not write.
    pub(crate) fn add_worktree_with_git(
        &self,
        path: &Path,
        branch: &str,
        base: &Oid,
    ) -> Result<(), GitError> {
        let path_arg = path.as_os_str().to_owned();
        self.git().run([
            "worktree".as_ref(),
            "add".as_ref(),
            "-q".as_ref(),
            "-b".as_ref(),
            branch.as_ref(),
            "--".as_ref(),
            path_arg.as_os_str(),
            base.as_ref(),
        ])?;
        Ok(())
    }

    /// Removes a worktree ganger made (with whatever is in it) and prunes its record.
    pub fn remove_worktree(&self, path: &Path) -> Result<(), GitError> {
        let path_arg = path.as_os_str().to_owned();
        self.git().run([
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            "--".as_ref(),
            path_arg.as_os_str(),
        ])?;
        Ok(())
    }

    /// Deletes a branch ganger made.
    pub fn delete_branch(&self, branch: &str) -> Result<(), GitError> {
        self.git().run(["branch", "-D", "-q", "--", branch])?;
        Ok(())
    }

    /// Opens `path` as a worktree of this same repository, or says why it is not one.
    pub fn open_worktree(&self, path: &Path) -> Result<Repo, GitError> {
        let found = discover(path)?;
        if found.common_dir != self.common_dir {
            return Err(GitError::format(
                path,
                format!("it belongs to the repository at {}", found.main.display()),
            ));
        }
        let canonical = path.canonicalize().map_err(|e| GitError::io(path, e))?;
        if found.worktree != canonical {
            return Err(GitError::format(
                path,
                format!(
                    "it is a directory inside the worktree {}",
                    found.worktree.display()
                ),
            ));
        }
        Ok(found)
    }

    /// The worktree's branch, or `None` when `HEAD` is detached or unreadable.
    pub fn branch(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        head.trim()
            .strip_prefix("ref: refs/heads/")
            .map(str::to_owned)
    }

    /// The commit `HEAD` points at (`None` on an unborn branch).
    pub fn head(&self) -> Result<Option<Oid>, GitError> {
        refs::head(&self.git_dir, &self.common_dir, &self.worktree)
    }

    /// The worktree's index, as a flat listing (`None` when it is in a form not read here).
    pub fn index_entries(&self) -> Option<Vec<IndexEntry>> {
        read_index(&self.git_dir.join("index")).ok()
    }

    /// Snapshots the worktree (see `snapshot.rs`), pointing `ref_name` at it when given.
    pub fn snapshot(&self, ref_name: Option<&str>, message: &str) -> Result<Snapshot, GitError> {
        self.snapshot_of(ref_name, message, Scope::Everything)
    }

    /// A snapshot that looks at the paths of `scope` only (see [`Scope`]).
    pub fn snapshot_of(
        &self,
        ref_name: Option<&str>,
        message: &str,
        scope: Scope<'_>,
    ) -> Result<Snapshot, GitError> {
        snapshot::take(
            &Place {
                worktree: &self.worktree,
                git_dir: &self.git_dir,
                common_dir: &self.common_dir,
            },
            ref_name,
            message,
            scope,
        )
    }

    /// Starts a watch of the worktree's changes from its index as it is now, `entries` (see
    /// `watch.rs`).
    pub fn watch_changes(&self, entries: &[IndexEntry]) -> ChangeWatch {
        ChangeWatch::start(
            &self.worktree,
            entries.iter().map(|e| e.path.as_slice()),
            &self.git_dir.join("index"),
        )
    }

    /// What `git status` shows for the worktree.
    pub fn status(&self) -> Result<WorktreeStatus, GitError> {
        status::read(&self.worktree)
    }

    /// The worktree's current state, untracked files included, against `base`: a patch, or a
    /// diffstat with `stat`.
    pub fn diff_against(&self, base: &str, stat: bool, color: bool) -> Result<Vec<u8>, GitError> {
        let now = self.snapshot(None, "ganger diff")?;
        self.diff_commits(base, &now.commit, stat, color)
    }

    /// What changed from `from` to `to`: a patch, or a diffstat with `stat`.
    pub fn diff_commits(
        &self,
        from: &str,
        to: &str,
        stat: bool,
        color: bool,
    ) -> Result<Vec<u8>, GitError> {
        let mut args = vec![
            "diff",
            if color {
                "--color=always"
            } else {
                "--no-color"
            },
        ];
        if stat {
            args.push("--stat");
        }
        args.extend(["--end-of-options", from, to]);
        Git::new(&self.worktree).run(args)
    }

    /// The same patch without colours, read as git writes it (for a patch too big to hold).
    pub fn diff_stream(
        &self,
        from: &str,
        to: &str,
        stat: bool,
    ) -> Result<crate::GitStream, GitError> {
        let mut args = vec!["diff", "--no-color"];
        if stat {
            args.push("--stat");
        }
        args.extend(["--end-of-options", from, to]);
        Git::new(&self.worktree).stream(args)
    }

    /// Deletes every ref under `prefix` (for example `refs/ganger/SLUG/`).
    pub fn delete_refs(&self, prefix: &str) -> Result<(), GitError> {
        let listing = self
            .git()
            .text(["for-each-ref", "--format=%(refname)", prefix])?;
        let commands: String = listing
            .lines()
            .filter(|name| !name.is_empty())
            .map(|name| format!("delete {name}\n"))
            .collect();
        if !commands.is_empty() {
            self.git()
                .run_with_input(["update-ref", "--stdin"], Some(commands.as_bytes()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_repo::TestRepo;

    #[test]
    fn worktrees_are_made_checked_and_removed() {
        let repo = TestRepo::new();
        let found = crate::discover(repo.root()).unwrap();
        let path = repo.root().parent().unwrap().join("repo-agent-x");
        let main = found.resolve_commit("main").unwrap().unwrap();
        found.add_worktree(&path, "agent/x", &main).unwrap();
        let opened = found.open_worktree(&path).unwrap();
        assert_eq!(opened.branch().as_deref(), Some("agent/x"));
        assert_eq!(
            opened.head().unwrap(),
            Some(repo.git(&["rev-parse", "main"]))
        );
        std::fs::create_dir_all(path.join("sub")).unwrap();
        let inside = found.open_worktree(&path.join("sub")).unwrap_err();
        assert!(
            inside.to_string().contains("inside the worktree"),
            "{inside}"
        );
        let other = TestRepo::new();
        let foreign = found.open_worktree(other.root()).unwrap_err();
        assert!(
            foreign.to_string().contains("belongs to the repository"),
            "{foreign}"
        );
        std::fs::write(path.join("x.txt"), "x").unwrap();
        let diff = String::from_utf8(opened.diff_against("main", true, false).unwrap()).unwrap();
        assert!(diff.contains("x.txt"), "{diff}");
        found.remove_worktree(&path).unwrap();
        found.delete_branch("agent/x").unwrap();
        assert!(!path.exists());
        assert_eq!(repo.git(&["branch", "--list", "agent/x"]), "");
    }

    #[test]
    fn delete_refs_removes_a_tasks_snapshots() {
        let repo = TestRepo::new();
        let found = crate::discover(repo.root()).unwrap();
        found
            .snapshot(Some("refs/ganger/t/round-1"), "one")
            .unwrap();
        found
            .snapshot(Some("refs/ganger/t/round-2"), "two")
            .unwrap();
        found
            .snapshot(Some("refs/ganger/u/round-1"), "other")
            .unwrap();
        found.delete_refs("refs/ganger/t/").unwrap();
        assert_eq!(
            repo.git(&["for-each-ref", "--format=%(refname)", "refs/ganger/"]),
            "refs/ganger/u/round-1"
        );
    }
}
