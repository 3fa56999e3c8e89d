//! A throwaway repository for this crate's tests, configured so that the user's own git
//! configuration cannot change what the tests see.

use std::path::Path;
use std::process::Command;

pub(crate) struct TestRepo {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl TestRepo {
    /// A repository on `main` with one commit holding `README.md` and `src/lib.txt`.
    pub(crate) fn new() -> Self {
        let repo = Self::empty();
        std::fs::write(repo.root.join("README.md"), "readme\n").unwrap();
        std::fs::create_dir_all(repo.root.join("src")).unwrap();
        std::fs::write(repo.root.join("src/lib.txt"), "lib\n").unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "init"]);
        repo
    }

    /// A repository with no commit yet.
    pub(crate) fn empty() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let repo = TestRepo { _dir: dir, root };
        repo.git(&["init", "-q", "-b", "main"]);
        for (key, value) in [
            ("user.name", "Test"),
            ("user.email", "test@example.invalid"),
            ("commit.gpgsign", "false"),
            ("core.autocrlf", "false"),
        ] {
            repo.git(&["config", key, value]);
        }
        repo
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// A linked worktree of the repository at `linked` (beside the repository's root), on a
    /// new `branch`.
    pub(crate) fn linked_worktree(&self, branch: &str) -> std::path::PathBuf {
        let linked = self.root.parent().unwrap().join("linked");
        self.git(&[
            "worktree",
            "add",
            "-q",
            "-b",
            branch,
            linked.to_str().unwrap(),
        ]);
        linked
    }

    /// Runs git in the repository and returns its trimmed stdout; panics on failure.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        git_in(&self.root, args)
    }
}

pub(crate) fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

/// Stages everything in the repository at `dir` (one a test made inside its repository) and
/// commits it as `message`, under an identity of its own.
pub(crate) fn commit_all_in(dir: &Path, message: &str) {
    git_in(dir, &["add", "-A"]);
    git_in(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}
