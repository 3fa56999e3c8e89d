//! Trees made from a cached checkout (the tree cache of docs/trees.md): a base commit's files
//! checked out once into a plain directory with an index of their own, and a task's worktree
//! registered on its branch without files, given copies of them (by the caller), and an index
//! that git finds clean without reading a file: the cached index with each entry's stat data
//! taken from the copy.

use crate::Oid;
use crate::command::Git;
use crate::discover::Repo;
use crate::error::GitError;
use crate::index::parse_index_at;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// An entry's stat data starts its record: ctime, mtime (seconds and nanoseconds, 4 bytes
/// each), dev, ino, mode, uid, gid, size (4 bytes each).
const STAT_LEN: usize = 40;
/// Where the mode sits in the stat data: it is the entry's, not the file's, and kept.
const MODE_AT: usize = 24;
const OID_LEN: usize = 20;

impl Repo {
    /// Checks out the files of `base` into the empty directory `dir` with git's own checkout
    /// (its filters and attributes apply), writing their index at `index`: the repository's
    /// own index, HEAD and work tree are not touched.
    pub fn check_out_into(&self, dir: &Path, index: &Path, base: &Oid) -> Result<(), GitError> {
        if base.starts_with('-') {
            return Err(GitError::format(
                dir,
                "refusing a base that reads as an option",
            ));
        }
        let mut work_tree = std::ffi::OsString::from("--work-tree=");
        work_tree.push(dir);
        self.git().with_env("GIT_INDEX_FILE", index).run([
            work_tree.as_os_str(),
            "read-tree".as_ref(),
            "--reset".as_ref(),
            "-u".as_ref(),
            base.as_ref(),
        ])?;
        Ok(())
    }

    /// Registers a worktree at `path` on a new branch `branch` made at `base`, without its
    /// files or an index (`git worktree add --no-checkout -b`). `branch` must have passed
    /// `check_branch_name`.
    pub fn add_worktree_without_files(
        &self,
        path: &Path,
        branch: &str,
        base: &Oid,
    ) -> Result<(), GitError> {
        if branch.starts_with('-') || base.starts_with('-') {
            return Err(GitError::format(
                path,
                "refusing an option for a branch or base",
            ));
        }
        self.git().run([
            "worktree".as_ref(),
            "add".as_ref(),
            "-q".as_ref(),
            "--no-checkout".as_ref(),
            "-b".as_ref(),
            branch.as_ref(),
            "--".as_ref(),
            path.as_os_str(),
            base.as_ref(),
        ])?;
        Ok(())
    }

    /// Runs the `post-checkout` hook in the worktree at `path` as `git worktree add` does
    /// after its checkout.
    pub fn run_post_checkout(&self, path: &Path, base: &Oid) -> Result<(), GitError> {
        if base.starts_with('-') {
            return Err(GitError::format(
                path,
                "refusing a base that reads as an option",
            ));
        }
        let none = "0".repeat(base.len());
        Git::new(path).run([
            "hook",
            "run",
            "--ignore-missing",
            "post-checkout",
            "--",
            &none,
            base,
            "1",
        ])?;
        Ok(())
    }
}

/// The index file of the linked worktree at `path` (`$GIT_DIR/worktrees/NAME/index`), from
/// its `.git` file.
pub fn worktree_index(path: &Path) -> Result<PathBuf, GitError> {
    let dot_git = path.join(".git");
    let text = std::fs::read_to_string(&dot_git).map_err(|e| GitError::io(&dot_git, e))?;
    text.strip_prefix("gitdir: ")
        .map(|dir| Path::new(dir.trim_end()).join("index"))
        .ok_or_else(|| GitError::format(&dot_git, "not a linked worktree's .git file"))
}

/// Writes at `to` the index `from` with every entry's stat data (times, device, inode, owner,
/// size) taken from the file at its path under `worktree`, whose files are copies of those
/// `from` describes (same content and mode): git then finds the copy clean by its stat data,
/// without reading a file. Everything else (entries, flags, extensions) is kept byte for byte;
/// git's checksum is written anew. A copy whose files are younger than `to` is not racily
/// clean: the caller keeps each copy's modification time from its original.
pub fn restamp_index(from: &Path, to: &Path, worktree: &Path) -> Result<(), GitError> {
    use sha1::{Digest, Sha1};
    let mut data = std::fs::read(from).map_err(|e| GitError::io(from, e))?;
    let (entries, _, starts) =
        parse_index_at(&data).map_err(|what| GitError::format(from, what))?;
    for (entry, &at) in entries.iter().zip(&starts) {
        if entry.mode == 0o160000 {
            continue;
        }
        let relative = std::str::from_utf8(&entry.path)
            .map_err(|_| GitError::format(from, "a path that is not UTF-8"))?;
        let file = worktree.join(relative);
        let meta = std::fs::symlink_metadata(&file).map_err(|e| GitError::io(&file, e))?;
        // git keeps the low 32 bits of each field.
        let fields = [
            meta.ctime() as u32,
            meta.ctime_nsec() as u32,
            meta.mtime() as u32,
            meta.mtime_nsec() as u32,
            meta.dev() as u32,
            meta.ino() as u32,
            0,
            meta.uid(),
            meta.gid(),
            meta.size() as u32,
        ];
        let stat = data
            .get_mut(at..at + STAT_LEN)
            .ok_or_else(|| GitError::format(from, "truncated index entry"))?;
        for (i, value) in fields.iter().enumerate() {
            if i * 4 != MODE_AT {
                stat[i * 4..i * 4 + 4].copy_from_slice(&value.to_be_bytes());
            }
        }
    }
    let body = data.len().saturating_sub(OID_LEN);
    let checksum: [u8; OID_LEN] = Sha1::digest(&data[..body]).into();
    data[body..].copy_from_slice(&checksum);
    let fresh = to.with_extension("ganger-new");
    std::fs::write(&fresh, &data).map_err(|e| GitError::io(&fresh, e))?;
    std::fs::rename(&fresh, to).map_err(|e| GitError::io(to, e))
}

#[cfg(test)]
mod tests {
    use crate::test_repo::TestRepo;
    use std::os::unix::fs::MetadataExt;

    /// Copies `from` into `to` (files, links, directories), keeping modification times.
    fn copy_keeping_times(from: &std::path::Path, to: &std::path::Path) {
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let (source, target) = (entry.path(), to.join(entry.file_name()));
            let meta = std::fs::symlink_metadata(&source).unwrap();
            if meta.is_dir() {
                std::fs::create_dir(&target).unwrap();
                copy_keeping_times(&source, &target);
            } else if meta.file_type().is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
            } else {
                std::fs::copy(&source, &target).unwrap();
                let time = std::fs::File::open(&source).unwrap().metadata().unwrap();
                let file = std::fs::File::options().write(true).open(&target).unwrap();
                file.set_modified(time.modified().unwrap()).unwrap();
                assert_eq!(file.metadata().unwrap().mtime(), meta.mtime());
            }
        }
    }

    #[test]
    fn a_worktree_given_a_cached_trees_copy_and_its_restamped_index_is_clean() {
        let repo = TestRepo::new();
        std::fs::create_dir_all(repo.root().join("src/deep")).unwrap();
        std::fs::write(repo.root().join("src/a.txt"), "a\n").unwrap();
        std::fs::write(repo.root().join("src/deep/b.txt"), "b\n").unwrap();
        std::os::unix::fs::symlink("a.txt", repo.root().join("src/link")).unwrap();
        crate::test_repo::commit_all_in(repo.root(), "three");
        let git = crate::discover(repo.root()).unwrap();
        let base = git.resolve_commit("HEAD").unwrap().unwrap();
        let cache = repo.root().parent().unwrap().join("cache");
        std::fs::create_dir_all(cache.join("files")).unwrap();
        git.check_out_into(&cache.join("files"), &cache.join("index"), &base)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(cache.join("files/src/deep/b.txt")).unwrap(),
            "b\n"
        );
        // The repository's own index and work tree are as they were.
        assert!(
            git.open_worktree(repo.root())
                .unwrap()
                .status()
                .unwrap()
                .entries
                .is_empty()
        );

        let task = repo.root().parent().unwrap().join("task");
        git.add_worktree_without_files(&task, "agent/task", &base)
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        copy_keeping_times(&cache.join("files"), &task);
        let index = super::worktree_index(&task).unwrap();
        super::restamp_index(&cache.join("index"), &index, &task).unwrap();
        git.run_post_checkout(&task, &base).unwrap();
        let opened = git.open_worktree(&task).unwrap();
        assert_eq!(opened.branch().as_deref(), Some("agent/task"));
        assert!(opened.status().unwrap().entries.is_empty());
        // git's own look agrees, and it reads no file to say so: the stat data matches.
        let out = crate::Git::new(&task)
            .run(["diff-files", "--name-only"])
            .unwrap();
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
        std::fs::write(task.join("src/a.txt"), "changed\n").unwrap();
        let out = crate::Git::new(&task)
            .run(["status", "--porcelain"])
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out), " M src/a.txt\n");
    }
}
