//! What `ganger merge` asks of git: committing a task's worktree as it is, merging two
//! commits without touching any work tree (`git merge-tree --write-tree`, so that a conflict
//! is found before anything changes), writing commits and moving branches, and the conflict
//! a worktree is left with when the base is merged into it for a worker to resolve.

use crate::Oid;
use crate::command::Git;
use crate::discover::Repo;
use crate::error::GitError;
use std::path::PathBuf;

/// The result of merging two commits in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeMerge {
    /// The merged tree (with conflict markers in the conflicted files).
    pub tree: Oid,
    /// The files that conflict, sorted; empty for a clean merge.
    pub conflicts: Vec<String>,
}

/// The identity ganger commits under when git has none configured.
const FALLBACK_IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "ganger"),
    ("GIT_AUTHOR_EMAIL", "ganger@localhost"),
    ("GIT_COMMITTER_NAME", "ganger"),
    ("GIT_COMMITTER_EMAIL", "ganger@localhost"),
];

impl Repo {
    /// git in this work tree, committing as the user when git knows who that is, else as
    /// ganger.
    fn committer(&self) -> Git {
        let git = Git::new(&self.worktree);
        if git.run(["var", "GIT_COMMITTER_IDENT"]).is_ok() {
            return git;
        }
        FALLBACK_IDENTITY
            .iter()
            .fold(git, |git, (key, value)| git.with_env(key, value))
    }

    /// The commit `rev` names, if any.
    pub fn resolve(&self, rev: &str) -> Option<Oid> {
        self.peeled(rev, "commit")
    }

    /// The tree of the commit `rev`.
    pub fn tree_of(&self, rev: &str) -> Option<Oid> {
        self.peeled(rev, "tree")
    }

    /// The object of type `kind` that `rev` peels to, if any.
    fn peeled(&self, rev: &str, kind: &str) -> Option<Oid> {
        Git::new(&self.worktree)
            .text([
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &format!("{rev}^{{{kind}}}"),
            ])
            .ok()
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
        let (code, _) = Git::new(&self.worktree).run_code([
            "merge-base",
            "--is-ancestor",
            ancestor,
            descendant,
        ])?;
        Ok(code == 0)
    }

    /// The commits of `tip` that `base` does not have, oldest first, merges left out.
    pub fn commits_between(&self, base: &str, tip: &str) -> Result<Vec<Oid>, GitError> {
        let out = Git::new(&self.worktree).text([
            "rev-list",
            "--reverse",
            "--no-merges",
            "--end-of-options",
            &format!("{base}..{tip}"),
            "--",
        ])?;
        Ok(out.lines().map(str::to_owned).collect())
    }

    /// Commits everything in this work tree (untracked files included, ignored ones not) on
    /// its branch with `message`; `None` when there was nothing to commit.
    pub fn commit_all(&self, message: &str) -> Result<Option<Oid>, GitError> {
        let git = self.committer();
        git.run(["add", "-A", "."])?;
        let (staged, _) = git.run_code(["diff", "--cached", "--quiet"])?;
        if staged == 0 && !self.merge_in_progress() {
            return Ok(None);
        }
        git.run(["commit", "-q", "--no-verify", "-m", message])?;
        Ok(self.resolve("HEAD"))
    }

    /// Merges `theirs` into `ours` in memory (`merge_base`: the base to use, else git's).
    pub fn merge_trees(
        &self,
        ours: &str,
        theirs: &str,
        merge_base: Option<&str>,
    ) -> Result<TreeMerge, GitError> {
        let mut args = vec![
            "merge-tree".to_owned(),
            "--write-tree".into(),
            "--name-only".into(),
            "--no-messages".into(),
            "-z".into(),
        ];
        if let Some(base) = merge_base {
            args.push(format!("--merge-base={base}"));
        }
        args.extend([ours.to_owned(), theirs.to_owned()]);
        let (code, out) = Git::new(&self.worktree).run_code(&args)?;
        let mut fields = out
            .split(|&b| b == 0)
            .map(|f| String::from_utf8_lossy(f).trim().to_owned());
        let tree = fields.next().unwrap_or_default();
        if code > 1 || tree.len() != 40 {
            return Err(GitError::format(
                &self.worktree,
                format!("git merge-tree exited {code} and printed {tree:?}"),
            ));
        }
        let mut conflicts: Vec<String> = fields.filter(|f| !f.is_empty()).collect();
        conflicts.sort();
        conflicts.dedup();
        Ok(TreeMerge { tree, conflicts })
    }

    /// Merges each pair `(ours, theirs)` in memory, all through one `git merge-tree --stdin`
    /// (one process instead of one per pair), in the pairs' order. Any commit that does not
    /// exist fails the whole call.
    pub fn merge_tree_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<TreeMerge>, GitError> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = pairs
            .iter()
            .map(|(ours, theirs)| format!("{ours} {theirs}\n"))
            .collect();
        let out = Git::new(&self.worktree).run_with_input(
            [
                "merge-tree",
                "--stdin",
                "--name-only",
                "--no-messages",
                "-z",
            ],
            Some(input.as_bytes()),
        )?;
        let merges = parse_merge_stream(&out);
        if merges.len() != pairs.len() {
            return Err(GitError::format(
                &self.worktree,
                format!(
                    "git merge-tree --stdin answered {} merges of {}",
                    merges.len(),
                    pairs.len()
                ),
            ));
        }
        Ok(merges)
    }

    /// The whole message of the commit `rev`.
    pub fn message_of(&self, rev: &str) -> Result<String, GitError> {
        Git::new(&self.worktree).text(["show", "-s", "--format=%B", "--end-of-options", rev])
    }

    /// Writes a commit of `tree` with `parents` and `message`.
    pub fn commit_tree(
        &self,
        tree: &str,
        parents: &[&str],
        message: &str,
    ) -> Result<Oid, GitError> {
        let mut args = vec!["commit-tree".to_owned(), tree.to_owned()];
        for parent in parents {
            args.extend(["-p".to_owned(), (*parent).to_owned()]);
        }
        args.extend(["-m".to_owned(), message.to_owned()]);
        self.committer().text(&args)
    }

    /// Replays `commit` onto `onto` in memory, keeping its author and message; `Err` with
    /// the conflicting files in the `TreeMerge` when it does not apply cleanly.
    pub fn replay(&self, commit: &str, onto: &str) -> Result<Result<Oid, TreeMerge>, GitError> {
        let merged = self.merge_trees(onto, commit, Some(&format!("{commit}^")))?;
        if !merged.conflicts.is_empty() {
            return Ok(Err(merged));
        }
        let git = Git::new(&self.worktree);
        let format = |f: &str| git.text(["show", "-s", &format!("--format={f}"), commit]);
        let message = format("%B")?;
        let replayed = self
            .committer()
            .with_env("GIT_AUTHOR_NAME", format("%an")?)
            .with_env("GIT_AUTHOR_EMAIL", format("%ae")?)
            .with_env("GIT_AUTHOR_DATE", format("%aI")?)
            .text([
                "commit-tree",
                merged.tree.as_str(),
                "-p",
                onto,
                "-m",
                message.as_str(),
            ])?;
        Ok(Ok(replayed))
    }

    /// Moves `refs/heads/BRANCH` from `old` to `new` (refused by git if it moved meanwhile).
    pub fn move_branch(&self, branch: &str, new: &str, old: &str) -> Result<(), GitError> {
        Git::new(&self.worktree).run([
            "update-ref",
            "-m",
            "ganger merge",
            &format!("refs/heads/{branch}"),
            new,
            old,
        ])?;
        Ok(())
    }

    /// Fast-forwards this work tree's checked-out branch to `commit`, files included; git
    /// refuses (and changes nothing) when that would overwrite a file it does not track.
    pub fn fast_forward(&self, commit: &str) -> Result<(), GitError> {
        Git::new(&self.worktree).run(["merge", "-q", "--ff-only", commit])?;
        Ok(())
    }

    /// Moves this work tree's branch, index and files to `commit`, refused by git if that
    /// would lose a local change (`git reset --keep`).
    pub fn reset_keep(&self, commit: &str) -> Result<(), GitError> {
        Git::new(&self.worktree).run(["reset", "-q", "--keep", commit])?;
        Ok(())
    }

    /// The work tree (of any worktree of the repository) that has `branch` checked out.
    pub fn checkout_of(&self, branch: &str) -> Result<Option<PathBuf>, GitError> {
        let listing = self.git().run(["worktree", "list", "--porcelain", "-z"])?;
        let wanted = format!("branch refs/heads/{branch}");
        let mut path = None;
        for field in listing.split(|&b| b == 0) {
            let field = String::from_utf8_lossy(field);
            if let Some(p) = field.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if field == wanted {
                return Ok(path);
            }
        }
        Ok(None)
    }

    /// The changes to tracked files in this work tree (staged or not); untracked files are
    /// not counted.
    pub fn tracked_changes(&self) -> Result<Vec<String>, GitError> {
        Ok(self
            .status()?
            .entries
            .iter()
            .filter(|e| e.code != "??")
            .map(|e| e.short())
            .collect())
    }

    /// Merges `rev` into this work tree's branch without committing, leaving conflict markers
    /// in the files for someone to resolve; returns the conflicting files (none: the merge is
    /// staged and only needs its commit).
    pub fn start_merge(&self, rev: &str, message: &str) -> Result<Vec<String>, GitError> {
        let git = self.committer();
        git.run_code([
            "merge",
            "--no-ff",
            "--no-commit",
            "-m",
            message,
            "--end-of-options",
            rev,
        ])?;
        if !self.merge_in_progress() {
            return Err(GitError::format(
                &self.worktree,
                format!("git merge {rev} did not start a merge"),
            ));
        }
        self.unmerged()
    }

    /// The files with unresolved conflicts in the index.
    pub fn unmerged(&self) -> Result<Vec<String>, GitError> {
        let out = Git::new(&self.worktree).run(["diff", "--name-only", "-z", "--diff-filter=U"])?;
        let mut files: Vec<String> = out
            .split(|&b| b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        files.dedup();
        Ok(files)
    }

    /// Whether a merge is in progress in this work tree.
    pub fn merge_in_progress(&self) -> bool {
        self.git_dir.join("MERGE_HEAD").is_file()
    }
}

/// The merges of `git merge-tree --stdin -z --name-only --no-messages`'s output: for each,
/// its status (`1` clean, `0` conflicted), its tree, each conflicted path, then an empty field.
fn parse_merge_stream(out: &[u8]) -> Vec<TreeMerge> {
    let mut fields = out
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let mut merges = Vec::new();
    while let (Some(status), Some(tree)) = (fields.next(), fields.next()) {
        if tree.len() != 40 || !matches!(status.as_str(), "0" | "1") {
            break;
        }
        let mut conflicts: Vec<String> = fields.by_ref().take_while(|f| !f.is_empty()).collect();
        conflicts.sort();
        conflicts.dedup();
        merges.push(TreeMerge { tree, conflicts });
    }
    merges
}

/// Whether `text` still has a line of a conflict marker (`<<<<<<< `, `=======`, `>>>>>>> `).
pub fn has_conflict_markers(text: &str) -> bool {
    text.lines().any(|line| {
        line.starts_with("<<<<<<< ") || line == "=======" || line.starts_with(">>>>>>> ")
    })
}

#[cfg(test)]
mod tests {
    use super::has_conflict_markers;
    use crate::test_repo::TestRepo;

    fn repo_with_branches() -> (TestRepo, crate::Repo) {
        let repo = TestRepo::new();
        repo.git(&["checkout", "-q", "-b", "task"]);
        std::fs::write(repo.root().join("README.md"), "task\n").unwrap();
        std::fs::write(repo.root().join("new.txt"), "new\n").unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "task"]);
        repo.git(&["checkout", "-q", "main"]);
        let found = crate::discover(repo.root()).unwrap();
        (repo, found)
    }

    #[test]
    fn a_clean_merge_in_memory_changes_no_file_and_no_branch() {
        let (repo, found) = repo_with_branches();
        let main = found.resolve("main").unwrap();
        let merged = found.merge_trees("main", "task", None).unwrap();
        assert!(merged.conflicts.is_empty());
        assert_eq!(found.resolve("main").unwrap(), main);
        assert_eq!(
            std::fs::read_to_string(repo.root().join("README.md")).unwrap(),
            "readme\n"
        );
        let task = found.resolve("task").unwrap();
        let commit = found
            .commit_tree(&merged.tree, &[&main, &task], "merge")
            .unwrap();
        found.fast_forward(&commit).unwrap();
        assert_eq!(found.resolve("main").unwrap(), commit);
        assert_eq!(
            std::fs::read_to_string(repo.root().join("README.md")).unwrap(),
            "task\n"
        );
    }

    #[test]
    fn a_conflict_is_found_in_memory_and_left_with_markers_when_started() {
        let (repo, found) = repo_with_branches();
        std::fs::write(repo.root().join("README.md"), "main\n").unwrap();
        repo.git(&["commit", "-q", "-am", "main"]);
        let merged = found.merge_trees("main", "task", None).unwrap();
        assert_eq!(merged.conflicts, ["README.md"]);
        assert_eq!(repo.git(&["status", "--porcelain"]), "");
        repo.git(&["checkout", "-q", "task"]);
        let conflicts = found.start_merge("main", "resolve").unwrap();
        assert_eq!(conflicts, ["README.md"]);
        let text = std::fs::read_to_string(repo.root().join("README.md")).unwrap();
        assert!(has_conflict_markers(&text), "{text}");
        std::fs::write(repo.root().join("README.md"), "both\n").unwrap();
        let commit = found.commit_all("resolved").unwrap().unwrap();
        assert!(found.is_ancestor("main", &commit).unwrap());
        assert!(!found.merge_in_progress());
    }

    #[test]
    fn replay_keeps_the_author_and_refuses_a_conflict() {
        let (repo, found) = repo_with_branches();
        std::fs::write(repo.root().join("other.txt"), "o\n").unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "other"]);
        let commits = found.commits_between("main", "task").unwrap();
        assert_eq!(commits.len(), 1);
        let replayed = found.replay(&commits[0], "main").unwrap().unwrap();
        assert_eq!(
            repo.git(&["show", "-s", "--format=%an %s", &replayed]),
            "Test task"
        );
        assert!(found.is_ancestor("main", &replayed).unwrap());
        std::fs::write(repo.root().join("README.md"), "main\n").unwrap();
        repo.git(&["commit", "-q", "-am", "main"]);
        let refused = found.replay(&commits[0], "main").unwrap().unwrap_err();
        assert_eq!(refused.conflicts, ["README.md"]);
    }

    #[test]
    fn pairs_merged_through_one_process_agree_with_one_merge_each() {
        let (repo, found) = repo_with_branches();
        repo.git(&["checkout", "-q", "-b", "other", "main"]);
        std::fs::write(repo.root().join("README.md"), "other\n").unwrap();
        std::fs::write(repo.root().join("new.txt"), "other new\n").unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "other"]);
        repo.git(&["checkout", "-q", "-b", "apart", "main"]);
        std::fs::write(repo.root().join("apart.txt"), "apart\n").unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "apart"]);
        let pairs = [("task", "other"), ("task", "apart"), ("other", "main")];
        let merged = found.merge_tree_pairs(&pairs).unwrap();
        let one_each: Vec<_> = pairs
            .iter()
            .map(|(ours, theirs)| found.merge_trees(ours, theirs, None).unwrap())
            .collect();
        assert_eq!(merged, one_each);
        assert_eq!(merged[0].conflicts, ["README.md", "new.txt"]);
        assert!(merged[1].conflicts.is_empty());
        assert!(found.merge_tree_pairs(&[("task", "nope")]).is_err());
        assert!(found.merge_tree_pairs(&[]).unwrap().is_empty());
    }

    #[test]
    fn markers_are_found_only_as_whole_marker_lines() {
        assert!(has_conflict_markers(
            "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> main\n"
        ));
        assert!(!has_conflict_markers("a\n== heading ==\n<<<not a marker\n"));
    }
}
