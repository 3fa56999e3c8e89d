//! What `ganger clean` asks of a task's branch before it deletes it: whether it exists, and
//! how many of its commits its base does not have (a branch is merged when that is none),
//! and the clean-up of worktree records whose directory is gone.

use crate::discover::Repo;
use crate::error::GitError;

impl Repo {
    /// Whether the local branch `branch` exists.
    pub fn branch_exists(&self, branch: &str) -> bool {
        self.branch_tip(branch).is_ok_and(|tip| tip.is_some())
    }

    /// How many commits of `branch` are not reachable from `base` (0: it is merged into it).
    pub fn commits_not_in(&self, branch: &str, base: &str) -> Result<u32, GitError> {
        let range = format!("{base}..refs/heads/{branch}");
        let count = self.git().text([
            "rev-list",
            "--count",
            "--end-of-options",
            range.as_str(),
            "--",
        ])?;
        count.trim().parse().map_err(|_| {
            GitError::format(
                &self.main,
                format!("git rev-list --count printed {count:?}"),
            )
        })
    }

    /// Forgets the records of worktrees whose directory is gone (`git worktree prune`), so
    /// that their branches can be deleted.
    pub fn prune_worktrees(&self) -> Result<(), GitError> {
        self.git().run(["worktree", "prune"])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_repo::TestRepo;

    #[test]
    fn a_branch_is_merged_when_its_base_has_all_its_commits() {
        let repo = TestRepo::new();
        let found = crate::discover(repo.root()).unwrap();
        assert!(!found.branch_exists("agent/x"));
        repo.git(&["branch", "agent/x"]);
        assert!(found.branch_exists("agent/x"));
        assert_eq!(found.commits_not_in("agent/x", "main").unwrap(), 0);
        repo.git(&["checkout", "-q", "agent/x"]);
        repo.git(&["commit", "-q", "--allow-empty", "-m", "one"]);
        repo.git(&["commit", "-q", "--allow-empty", "-m", "two"]);
        repo.git(&["checkout", "-q", "main"]);
        assert_eq!(found.commits_not_in("agent/x", "main").unwrap(), 2);
        repo.git(&["merge", "-q", "--ff-only", "agent/x"]);
        assert_eq!(found.commits_not_in("agent/x", "main").unwrap(), 0);
        assert!(found.commits_not_in("agent/x", "no-such-base").is_err());
    }
}
