//! A plain worktree of a task's work for a person (`ganger checkout`): detached at the commit
//! the task's branch is at, with the files of a snapshot of the task on top, unstaged, so that
//! `git status` and an editor show the task's work as changes to carry on by hand.

use crate::Oid;
use crate::command::Git;
use crate::discover::Repo;
use crate::error::GitError;
use std::path::Path;

impl Repo {
    /// Adds a worktree at `path` detached at `at`, its files then made those of the commit
    /// `files` (its index stays at `at`).
    pub fn add_worktree_with_files(
        &self,
        path: &Path,
        at: &Oid,
        files: &Oid,
    ) -> Result<(), GitError> {
        if at.starts_with('-') || files.starts_with('-') {
            return Err(GitError::format(
                path,
                "refusing a commit that reads as an option",
            ));
        }
        self.git().run([
            "worktree".as_ref(),
            "add".as_ref(),
            "-q".as_ref(),
            "--detach".as_ref(),
            "--".as_ref(),
            path.as_os_str(),
            at.as_ref(),
        ])?;
        let source = format!("--source={files}");
        Git::new(path).run(["restore", "--worktree", &source, "--", ":/"])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_repo::{TestRepo, git_in};

    #[test]
    fn a_checkout_shows_the_snapshots_files_as_changes_to_the_branch() {
        let repo = TestRepo::new();
        let git = crate::discover(repo.root()).unwrap();
        let tip = git.resolve_commit("HEAD").unwrap().unwrap();
        let work = repo.linked_worktree("agent/work");
        std::fs::write(work.join("src/lib.txt"), "changed\n").unwrap();
        std::fs::remove_file(work.join("README.md")).unwrap();
        std::fs::write(work.join("new.txt"), "new\n").unwrap();
        let opened = git.open_worktree(&work).unwrap();
        let snapshot = opened.snapshot(None, "test").unwrap().commit;
        let out = repo.root().parent().unwrap().join("out");
        git.add_worktree_with_files(&out, &tip, &snapshot).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("src/lib.txt")).unwrap(),
            "changed\n"
        );
        assert!(!out.join("README.md").exists());
        let status = git_in(&out, &["status", "--porcelain"]);
        assert_eq!(status, " D README.md\n M src/lib.txt\n?? new.txt");
    }
}
