//! Names of branches and revisions that come from users (`--branch`, `--base`, fleet files,
//! `ganger.toml`) are checked here before any other git command sees them. git reads an
//! argument that begins with `-` as an option, and `git worktree add -b NAME` passes NAME on to
//! `git branch` unprotected: a branch named `-D` deleted the base branch. So a new branch's
//! name is held to `git check-ref-format`'s rules (and may not begin with `-`), and a revision
//! is resolved to its commit with `--end-of-options` before it is used, by its object id.
//!
//! Both are answered in-process where the repository's files answer them (the rules are
//! git's documented ones, held equal to `git check-ref-format` by a test; a branch is its
//! loose ref or its line in `packed-refs`): a start asks them on every task, and each git
//! process costs it a millisecond or two. Anything else (reftable, a revision that is not a
//! plain branch name) is asked of git.

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
        Ok(if valid_ref_name(&format!("refs/heads/{name}")) {
            Ok(())
        } else {
            Err(BadName("it is not a valid git branch name".to_owned()))
        })
    }

    /// The commit the local branch `branch` points at, read from the repository's files;
    /// `Ok(None)` when there is no such branch.
    pub fn branch_tip(&self, branch: &str) -> Result<Option<Oid>, GitError> {
        let name = format!("refs/heads/{branch}");
        if let Some(found) = crate::refs::read_ref_files(&self.common_dir, &name)? {
            return Ok(found);
        }
        let (code, out) = self.git().run_code([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{name}^{{commit}}"),
        ])?;
        let oid = String::from_utf8_lossy(&out).trim().to_owned();
        Ok((code == 0 && !oid.is_empty()).then_some(oid))
    }

    /// The commit `rev` names, read only as a revision (never as an option); `None` when it
    /// names no commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<Oid>, GitError> {
        if rev.is_empty() || rev.starts_with('-') {
            return Ok(None);
        }
        if let Some(tip) = self.plain_branch(rev)? {
            return Ok(Some(tip));
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

impl Repo {
    /// The tip of `rev` when it is plain branch name that git would read as that branch: no
    /// ref of higher precedence (`NAME`, `refs/NAME`, `refs/tags/NAME`) has the name.
    fn plain_branch(&self, rev: &str) -> Result<Option<Oid>, GitError> {
        if obviously_bad(rev).is_some() || !valid_ref_name(&format!("refs/heads/{rev}")) {
            return Ok(None);
        }
        for shadow in [
            rev.to_owned(),
            format!("refs/{rev}"),
            format!("refs/tags/{rev}"),
        ] {
            match crate::refs::read_ref_files(&self.common_dir, &shadow)? {
                Some(None) => {}
                _ => return Ok(None),
            }
        }
        match crate::refs::read_ref_files(&self.common_dir, &format!("refs/heads/{rev}"))? {
            Some(Some(tip)) => Ok(Some(tip)),
            _ => Ok(None),
        }
    }
}

/// Whether `name` is a valid full ref name, by `git check-ref-format`'s rules: no component
/// begins with `.` or ends with `.lock`, no `..`, no control character, space, `~ ^ : ? * [ \`,
/// no `@{`, not `@`, no empty component (so no leading, trailing or doubled `/`), and no
/// trailing `.`.
pub(crate) fn valid_ref_name(name: &str) -> bool {
    if name.is_empty() || name == "@" || name.ends_with('.') || name.contains("..") {
        return false;
    }
    if name.contains("@{") {
        return false;
    }
    if name.chars().any(|c| {
        c.is_ascii_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
    }) {
        return false;
    }
    name.split('/').all(|component| {
        !component.is_empty() && !component.starts_with('.') && !component.ends_with(".lock")
    })
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
    fn the_rules_are_git_s_own() {
        let repo = TestRepo::new();
        for name in [
            "a",
            "a/b",
            "a.b",
            "a..b",
            ".a",
            "a/.b",
            "a.lock",
            "a/b.lock/c",
            "a.",
            "a/",
            "/a",
            "a//b",
            "a b",
            "a~b",
            "a^b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            "a\\b",
            "a@{b",
            "@",
            "a@b",
            "@a",
            "a\u{7f}b",
            "a\tb",
            "é",
            "a-b_c",
            "a.lock.b",
            "-a",
            "a/-b",
            "HEAD",
            "x/HEAD",
        ] {
            let full = format!("refs/heads/{name}");
            let out = std::process::Command::new("git")
                .args(["check-ref-format", &full])
                .current_dir(repo.root())
                .output()
                .unwrap();
            assert_eq!(
                super::valid_ref_name(&full),
                out.status.success(),
                "{name:?}: git says {}",
                out.status.success()
            );
        }
    }

    #[test]
    fn branches_are_read_from_loose_and_packed_refs() {
        let repo = TestRepo::new();
        let found = crate::discover(repo.root()).unwrap();
        let main = repo.git(&["rev-parse", "main"]);
        repo.git(&["branch", "loose"]);
        repo.git(&["branch", "packed"]);
        repo.git(&["pack-refs", "--all"]);
        repo.git(&["branch", "after-pack"]);
        for branch in ["main", "loose", "packed", "after-pack"] {
            assert_eq!(
                found.branch_tip(branch).unwrap(),
                Some(main.clone()),
                "{branch}"
            );
            assert!(found.branch_exists(branch), "{branch}");
        }
        assert_eq!(found.branch_tip("nope").unwrap(), None);
        assert!(!found.branch_exists("nope"));
        // A tag of the same name shadows the branch for git: then git is asked.
        repo.git(&["commit", "-q", "--allow-empty", "-m", "second"]);
        repo.git(&["tag", "loose", "HEAD"]);
        let tagged = repo.git(&["rev-parse", "loose^{commit}"]);
        assert_eq!(found.resolve_commit("loose").unwrap(), Some(tagged));
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
