//! Worktrees made ahead of time (the pool of docs/trees.md): registered detached at a base
//! without their files (a write of git's record, quick enough to hold the repository's
//! worktree lock for), checked out after, and moved into place and put on a new branch when a
//! task takes one, without git reading their files or index again.

use crate::Oid;
use crate::command::Git;
use crate::discover::Repo;
use crate::error::GitError;
use std::path::Path;

/// The object id git's hooks are given for "no commit" (SHA-1 repositories).
const NO_COMMIT: &str = "0000000000000000000000000000000000000000";

fn refuse_option(path: &Path, words: &[&str]) -> Result<(), GitError> {
    match words.iter().find(|word| word.starts_with('-')) {
        Some(word) => Err(GitError::format(
            path,
            format!("refusing {word:?}: git would read an option"),
        )),
        None => Ok(()),
    }
}

impl Repo {
    /// Registers a worktree at `path`, detached at the commit `base` and locked (so that no
    /// `git worktree prune` drops its record while it is being moved), without checking out
    /// its files: git writes its record and an empty index only.
    pub fn add_worktree_unchecked(&self, path: &Path, base: &Oid) -> Result<(), GitError> {
        refuse_option(path, &[base])?;
        let path_arg = path.as_os_str();
        self.git().run([
            "worktree".as_ref(),
            "add".as_ref(),
            "-q".as_ref(),
            "--no-checkout".as_ref(),
            "--detach".as_ref(),
            "--lock".as_ref(),
            "--reason".as_ref(),
            "ganger's pool of worktrees".as_ref(),
            "--".as_ref(),
            path_arg,
            base.as_ref(),
        ])?;
        Ok(())
    }

    /// Checks out the files of a worktree registered without them, as `git worktree add`
    /// does after registering one: `reset --hard`, then the `post-checkout` hook.
    pub fn check_out_files(&self, worktree: &Path, base: &Oid) -> Result<(), GitError> {
        refuse_option(worktree, &[base])?;
        let git = Git::new(worktree);
        git.run(["reset", "--hard", "--no-recurse-submodules", "-q"])?;
        git.run([
            "hook",
            "run",
            "--ignore-missing",
            "post-checkout",
            "--",
            NO_COMMIT,
            base,
            "1",
        ])?;
        Ok(())
    }

    /// Tells git that the linked worktree now at `path` was moved there by a rename: its
    /// record's `gitdir` file (gitrepository-layout: "the absolute path back to the .git file
    /// that points to here") is written anew, atomically. Not `git worktree repair`, which
    /// also rewrites the `.git` file of every other worktree that looks broken, and so put
    /// one back into a worktree `git worktree remove` was deleting at that moment.
    pub fn repair_moved_worktree(&self, path: &Path) -> Result<(), GitError> {
        let dot_git = path.join(".git");
        let text = std::fs::read_to_string(&dot_git).map_err(|e| GitError::io(&dot_git, e))?;
        let record = text
            .strip_prefix("gitdir: ")
            .map(|dir| Path::new(dir.trim_end()).to_path_buf())
            .filter(|record| record.starts_with(self.common_dir.join("worktrees")))
            .ok_or_else(|| GitError::format(path, "not a linked worktree of this repository"))?;
        let fresh = record.join("gitdir.ganger-new");
        let line = format!("{}\n", dot_git.display());
        std::fs::write(&fresh, line).map_err(|e| GitError::io(&fresh, e))?;
        let gitdir = record.join("gitdir");
        std::fs::rename(&fresh, &gitdir).map_err(|e| GitError::io(&gitdir, e))
    }

    /// Unlocks a worktree locked by [`Repo::add_worktree_unchecked`].
    pub fn unlock_worktree(&self, path: &Path) -> Result<(), GitError> {
        let path_arg = path.as_os_str();
        self.git().run([
            "worktree".as_ref(),
            "unlock".as_ref(),
            "--".as_ref(),
            path_arg,
        ])?;
        Ok(())
    }

    /// Removes a worktree ganger made, locked or not, with whatever is in it.
    pub fn remove_locked_worktree(&self, path: &Path) -> Result<(), GitError> {
        let path_arg = path.as_os_str();
        self.git().run([
            "worktree".as_ref(),
            "remove".as_ref(),
            "--force".as_ref(),
            "--force".as_ref(),
            "--".as_ref(),
            path_arg,
        ])?;
        Ok(())
    }

    /// Puts the detached worktree at `path` on a new branch `branch` made at `base`, where it
    /// is: neither its files nor its index are read. `branch` must have passed
    /// `check_branch_name`; a branch of that name already there is an error.
    pub fn attach_new_branch(&self, path: &Path, branch: &str, base: &Oid) -> Result<(), GitError> {
        refuse_option(path, &[branch, base])?;
        let full = format!("refs/heads/{branch}");
        self.git().run([
            "update-ref",
            "-m",
            "ganger: a pooled worktree taken",
            "--",
            &full,
            base,
            "",
        ])?;
        Git::new(path).run(["symbolic-ref", "HEAD", &full])?;
        Ok(())
    }

    /// The name of a linked worktree's record (`NAME` of `.git/worktrees/NAME`), read from
    /// its `.git` file; `None` for anything else.
    pub fn worktree_record_name(path: &Path) -> Option<String> {
        let text = std::fs::read_to_string(path.join(".git")).ok()?;
        let gitdir = text.strip_prefix("gitdir: ")?.trim_end();
        let record = Path::new(gitdir);
        let parent = record.parent()?;
        if parent.file_name()? != "worktrees" {
            return None;
        }
        record.file_name()?.to_str().map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_repo::TestRepo;

    #[test]
    fn a_worktree_made_ahead_is_moved_and_put_on_a_branch_as_if_added() {
        let repo = TestRepo::new();
        let git = crate::discover(repo.root()).unwrap();
        let base = git.resolve_commit("HEAD").unwrap().unwrap();
        let made = repo.root().join(".ganger/pool").join("ganger-pool-1");
        git.add_worktree_unchecked(&made, &base).unwrap();
        git.check_out_files(&made, &base).unwrap();
        let taken = repo.root().parent().unwrap().join("taken");
        std::fs::rename(&made, &taken).unwrap();
        // Locked while it moves: a prune meanwhile keeps its record.
        crate::test_repo::git_in(repo.root(), &["worktree", "prune"]);
        git.repair_moved_worktree(&taken).unwrap();
        git.unlock_worktree(&taken).unwrap();
        git.attach_new_branch(&taken, "agent/taken", &base).unwrap();
        let opened = git.open_worktree(&taken).unwrap();
        assert_eq!(opened.branch().as_deref(), Some("agent/taken"));
        assert!(opened.status().unwrap().entries.is_empty());
        assert_eq!(
            crate::Repo::worktree_record_name(&taken).as_deref(),
            Some("ganger-pool-1")
        );
        // The branch is new: a second one of the name is refused.
        assert!(git.attach_new_branch(&taken, "agent/taken", &base).is_err());
        let other = repo.root().join(".ganger/pool/ganger-pool-2");
        git.add_worktree_unchecked(&other, &base).unwrap();
        git.remove_locked_worktree(&other).unwrap();
        assert!(!other.exists());
    }
}
