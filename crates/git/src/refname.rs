//! Names of branches and revisions that come from users (`--branch`, `--base`, fleet files,
//! `ganger.toml`) are checked here before any other git command sees them. git reads an
//! argument that begins with `-` as an option, and `git worktree add -b NAME` passes NAME on to
//! `git branch` unprotected: a branch named `-D` deleted the base branch. So a new branch's
//! name is held to `git check-ref-format` (and may not begin with `-`), and a revision is
//! resolved to its commit with `--end-of-options` before it is used, by its object id.

use crate::Oid;
use crate::discover::Repo;
use crate::error::GitError;

/// Why a name cannot be a new branch's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadName(pub String);

impl Repo {
    /// Checks that `name` can be the name of a new local branch: `Ok(Err(why))` when it
    /// cannot, an error when git itself could not be asked.
    pub fn check_branch_name(&self, name: &str) -> Result<Result<(), BadName>, GitError> {
        if let Some(why) = obviously_bad(name) {
            return Ok(Err(BadName(why.to_owned())));
        }
        let full = format!("refs/heads/{name}");
        let (code, _) = self.git().run_code(["check-ref-format", full.as_str()])?;
        Ok(if code == 0 {
            Ok(())
        } else {
            Err(BadName("it is not a valid git branch name".to_owned()))
        })
    }

    /// The commit `rev` names, read only as a revision (never as an option); `None` when it
    /// names no commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<Oid>, GitError> {
        if rev.is_empty() || rev.starts_with('-') {
            return Ok(None);
        }
        let spec = format!("{rev}^{{commit}}");
        let (code, out) = self.git().run_code([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            spec.as_str(),
        ])?;
        let oid = String::from_utf8_lossy(&out).trim().to_owned();
        Ok((code == 0 && !oid.is_empty()).then_some(oid))
    }
}

/// What no branch name of ganger's may be, whatever git would say.
fn obviously_bad(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.starts_with('-') {
        Some("it begins with '-', which git would read as an option")
    } else if name == "HEAD" {
        Some("HEAD is not a branch name")
    } else if name.chars().any(|c| c.is_control()) {
        Some("it holds a control character")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::test_repo::TestRepo;

    #[test]
    fn option_like_and_malformed_branch_names_are_refused() {
        let repo = TestRepo::new();
        let found = crate::discover(repo.root()).unwrap();
        for bad in [
            "-D", "-f", "--orphan", "", "HEAD", "a..b", "a b", "x.lock", "@{-1}", "a\nb",
        ] {
            assert!(
                found.check_branch_name(bad).unwrap().is_err(),
                "{bad:?} was taken"
            );
        }
        for good in ["agent/x", "feature", "a-b_c.d"] {
            assert_eq!(found.check_branch_name(good).unwrap(), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn revisions_resolve_to_commits_and_options_do_not() {
        let repo = TestRepo::new();
        let found = crate::discover(repo.root()).unwrap();
        let main = repo.git(&["rev-parse", "main"]);
        assert_eq!(found.resolve_commit("main").unwrap(), Some(main.clone()));
        assert_eq!(found.resolve_commit(&main).unwrap(), Some(main));
        for bad in ["--orphan", "-D", "", "no-such-branch", "main^{tree}"] {
            assert_eq!(found.resolve_commit(bad).unwrap(), None, "{bad:?}");
        }
    }
}
