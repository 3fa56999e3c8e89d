//! `git status` of a work tree, read from its porcelain v1 `-z` format: what a person would
//! see, staged and unstaged changes and untracked files, ignored files left out.

use crate::command::Git;
use crate::error::GitError;
use std::path::Path;

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusEntry {
    /// The two status letters (`" M"`, `"A "`, `"??"`, ...).
    pub code: String,
    /// The path relative to the work tree.
    pub path: String,
    /// For renames and copies, the path it came from.
    pub from: Option<String>,
}

impl StatusEntry {
    /// The entry as `git status --short` prints it.
    pub fn short(&self) -> String {
        match &self.from {
            Some(from) => format!("{} {} -> {}", self.code, from, self.path),
            None => format!("{} {}", self.code, self.path),
        }
    }
}

/// A work tree's changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeStatus {
    pub entries: Vec<StatusEntry>,
}

pub(crate) fn read(worktree: &Path) -> Result<WorktreeStatus, GitError> {
    let out =
        Git::new(worktree).run(["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
    Ok(parse(&out))
}

/// More paths than this are not given to one `git status` (its command line): it looks at
/// everything instead.
const MOST_PATHSPECS: usize = 4_000;

impl crate::Repo {
    /// What `git status` shows for the work tree at `paths` (relative, `/`-separated, taken
    /// literally; a directory stands for everything under it) when nothing else differs: git
    /// looks at those paths only. Everything when there are too many for one command line.
    pub fn status_of(
        &self,
        paths: &std::collections::BTreeSet<String>,
    ) -> Result<WorktreeStatus, GitError> {
        if paths.len() > MOST_PATHSPECS {
            return read(&self.worktree);
        }
        if paths.is_empty() {
            return Ok(WorktreeStatus::default());
        }
        let mut args = vec![
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let out = Git::new(&self.worktree)
            .with_env("GIT_LITERAL_PATHSPECS", "1")
            .run(args)?;
        Ok(parse(&out))
    }
}

fn parse(out: &[u8]) -> WorktreeStatus {
    let mut entries = Vec::new();
    let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let Some(field) = fields.next() {
        if field.len() < 4 {
            continue;
        }
        let code = String::from_utf8_lossy(&field[..2]).into_owned();
        let path = String::from_utf8_lossy(&field[3..]).into_owned();
        let from = if code.starts_with('R') || code.starts_with('C') {
            fields
                .next()
                .map(|f| String::from_utf8_lossy(f).into_owned())
        } else {
            None
        };
        entries.push(StatusEntry { code, path, from });
    }
    WorktreeStatus { entries }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::TestRepo;

    #[test]
    fn status_lists_what_git_status_short_shows() {
        let repo = TestRepo::new();
        std::fs::write(repo.root().join("new file.txt"), "n").unwrap();
        std::fs::write(repo.root().join("README.md"), "changed").unwrap();
        repo.git(&["mv", "src/lib.txt", "src/moved.txt"]);
        let shown: Vec<String> = read(repo.root())
            .unwrap()
            .entries
            .iter()
            .map(StatusEntry::short)
            .collect();
        assert_eq!(
            shown,
            [
                " M README.md",
                "R  src/lib.txt -> src/moved.txt",
                "?? new file.txt"
            ]
        );
    }

    #[test]
    fn a_status_of_the_changed_paths_is_the_whole_status() {
        let repo = TestRepo::new();
        std::fs::create_dir_all(repo.root().join("new/deep")).unwrap();
        std::fs::write(repo.root().join("new/deep/a.txt"), "n").unwrap();
        std::fs::write(repo.root().join("README.md"), "changed").unwrap();
        repo.git(&["mv", "src/lib.txt", "src/moved.txt"]);
        let whole = read(repo.root()).unwrap();
        let found = crate::discover(repo.root()).unwrap();
        // A directory stands for what is under it; a path with nothing there is nothing.
        let paths = [
            "README.md",
            "new",
            "src/lib.txt",
            "src/moved.txt",
            "gone.txt",
        ]
        .map(str::to_owned)
        .into_iter()
        .collect();
        assert_eq!(found.status_of(&paths).unwrap(), whole);
        let some = ["README.md"].map(str::to_owned).into_iter().collect();
        let shown: Vec<String> = found
            .status_of(&some)
            .unwrap()
            .entries
            .iter()
            .map(StatusEntry::short)
            .collect();
        assert_eq!(shown, [" M README.md"]);
    }
}
