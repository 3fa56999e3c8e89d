//! Finding the repository from a directory, in-process: walks up to the nearest `.git`, follows
//! a linked worktree's `gitdir:` file and `commondir`, and names the main checkout, where
//! ganger keeps its state. Unusual layouts (a separate git dir) ask `git worktree list`.

use crate::command::Git;
use crate::error::GitError;
use std::fs;
use std::path::{Path, PathBuf};

/// Where a repository's parts are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The main checkout's top directory.
    pub main: PathBuf,
    /// The git directory shared by all worktrees (usually `main/.git`).
    pub common_dir: PathBuf,
    /// The top of the work tree the search started in (the main checkout or a linked worktree).
    pub worktree: PathBuf,
    /// That work tree's own git directory.
    pub git_dir: PathBuf,
}

/// Finds the repository that contains `start`.
pub fn discover(start: &Path) -> Result<Repo, GitError> {
    let start = start.canonicalize().map_err(|e| GitError::io(start, e))?;
    let mut dir: &Path = &start;
    loop {
        let dot_git = dir.join(".git");
        if let Ok(meta) = fs::metadata(&dot_git) {
            let git_dir = if meta.is_dir() {
                dot_git
            } else {
                read_gitdir_file(&dot_git, dir)?
            };
            if git_dir.join("HEAD").is_file() {
                return layout(dir.to_path_buf(), git_dir);
            }
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => return Err(GitError::NotARepo { path: start }),
        }
    }
}

/// Reads a `.git` file (`gitdir: PATH`) of a linked worktree or a separate git dir.
fn read_gitdir_file(file: &Path, base: &Path) -> Result<PathBuf, GitError> {
    let text = fs::read_to_string(file).map_err(|e| GitError::io(file, e))?;
    let target = text
        .strip_prefix("gitdir:")
        .map(str::trim)
        .ok_or_else(|| GitError::format(file, "a .git file without `gitdir:`"))?;
    Ok(absolute(base, Path::new(target)))
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    joined.canonicalize().unwrap_or(joined)
}

fn layout(worktree: PathBuf, git_dir: PathBuf) -> Result<Repo, GitError> {
    let common_dir = match fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => absolute(&git_dir, Path::new(text.trim())),
        Err(_) => git_dir.clone(),
    };
    let main = if common_dir.file_name().is_some_and(|name| name == ".git") {
        common_dir
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| GitError::format(&common_dir, "a git directory without a parent"))?
    } else {
        main_from_worktree_list(&worktree)?
    };
    Ok(Repo {
        main,
        common_dir,
        worktree,
        git_dir,
    })
}

/// The main worktree is the first entry of `git worktree list --porcelain`.
fn main_from_worktree_list(worktree: &Path) -> Result<PathBuf, GitError> {
    let listing = Git::new(worktree).text(["worktree", "list", "--porcelain"])?;
    let first = listing
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("worktree "))
        .ok_or_else(|| GitError::format(worktree, "`git worktree list` named no main worktree"))?;
    if listing.lines().nth(1).is_some_and(|line| line == "bare") {
        return Err(GitError::format(
            worktree,
            "the repository is bare; ganger needs a main checkout to keep its state in",
        ));
    }
    Ok(PathBuf::from(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::TestRepo;

    #[test]
    fn finds_the_main_checkout_from_a_linked_worktree_subdirectory() {
        let repo = TestRepo::new();
        let linked = repo.linked_worktree("side");
        std::fs::create_dir_all(linked.join("a/b")).unwrap();
        let found = discover(&linked.join("a/b")).unwrap();
        assert_eq!(found.main, repo.root().canonicalize().unwrap());
        assert_eq!(
            found.common_dir,
            repo.root().join(".git").canonicalize().unwrap()
        );
        assert_eq!(found.worktree, linked.canonicalize().unwrap());
        assert!(found.git_dir.starts_with(&found.common_dir));
        let main = discover(repo.root()).unwrap();
        assert_eq!(main.main, main.worktree);
        assert_eq!(main.git_dir, main.common_dir);
    }

    #[test]
    fn a_directory_outside_any_repository_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            discover(dir.path()),
            Err(GitError::NotARepo { .. })
        ));
    }
}
